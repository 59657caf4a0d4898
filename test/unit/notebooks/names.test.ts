import path from "node:path";
import { executedName, nameProblem, pathInFolder, untitledName, userFolder, withExtension } from "../../../services/notebooks/names";

describe("notebook names", () => {
  it("names new notebooks like Jupyter: Untitled.ipynb, then Untitled1.ipynb, …", () => {
    expect(untitledName(new Set())).toBe("Untitled.ipynb");
    expect(untitledName(new Set(["Untitled.ipynb"]))).toBe("Untitled1.ipynb");
    expect(untitledName(new Set(["Untitled.ipynb", "Untitled1.ipynb", "Untitled3.ipynb"]))).toBe("Untitled2.ipynb");
  });

  it("adds .ipynb when missing", () => {
    expect(withExtension("report")).toBe("report.ipynb");
    expect(withExtension("report.ipynb")).toBe("report.ipynb");
  });

  it.each([
    ["../x.ipynb"],
    ["../../etc/passwd.ipynb"],
    ["/etc/x.ipynb"],
    ["a/b.ipynb"],
    ["a\\b.ipynb"],
    ["a\0b.ipynb"],
    [".hidden.ipynb"],
    [".ipynb"],
    [" spaced.ipynb"],
    ["x.executed.ipynb"],
    ["é".repeat(126) + ".ipynb"],
  ])("refuses %j", (name) => {
    expect(nameProblem(name)).not.toBeNull();
  });

  it("accepts plain names, spaces and unicode inside", () => {
    expect(nameProblem("Pump vibration 2024 – März.ipynb")).toBeNull();
    expect(nameProblem("a".repeat(249) + ".ipynb")).toBeNull();
  });

  it("keeps an email readable as a folder and encodes what could climb out", () => {
    expect(userFolder("Ana.Lyst+x@plant.example")).toBe("ana.lyst+x@plant.example");
    expect(userFolder("a/../b@x")).toBe("a%2F..%2Fb@x");
    expect(userFolder("..")).toBe("%2E%2E");
  });

  it("never resolves a path outside the user's folder", () => {
    const root = "/srv/nb";
    expect(pathInFolder(root, "u@x", "a.ipynb")).toBe(path.join(root, "u@x", "a.ipynb"));
    expect(() => pathInFolder(root, "u@x", "../v@x/a.ipynb")).toThrow();
    expect(() => pathInFolder(root, "u@x", "/etc/passwd")).toThrow();
  });

  it("puts the executed copy beside the source", () => {
    expect(executedName("Untitled.ipynb")).toBe("Untitled.executed.ipynb");
  });
});
