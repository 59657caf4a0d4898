"""Executes one notebook on a Jupyter kernel and writes the executed copy.

Usage: runner.py <source.ipynb> <executed.ipynb> <cell_timeout_seconds>

Prints JSON lines on stdout: first {"kernel_pid": N}, last {"status": "succeeded"} or
{"status": "failed", "error": "<ename>: <evalue>"}. jupyter_client starts the kernel in a
session of its own, so the Node service, which enforces the run's time limit, needs the
kernel's pid to kill it together with this process.
"""
import json
import os
import sys


def say(line):
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def main():
    source, executed, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    nb = nbformat.read(source, as_version=4)
    cwd = os.path.dirname(os.path.abspath(source))
    # Our notebooks are Python ones: the kernel is the python3 one of this interpreter's installation.
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=cwd)
    say({"kernel_pid": km.provisioner.pid})
    client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=False, resources={"metadata": {"path": cwd}})
    status, error = "succeeded", None
    try:
        try:
            client.execute()
        finally:
            km.shutdown_kernel(now=True)
    except CellExecutionError as e:
        ename = getattr(e, "ename", "") or "Error"
        evalue = getattr(e, "evalue", "") or ""
        status, error = "failed", (f"{ename}: {evalue}" if evalue else ename)
    except CellTimeoutError:
        status, error = "failed", f"A cell ran longer than {timeout} s"
    tmp = executed + ".tmp"
    nbformat.write(nb, tmp)
    os.replace(tmp, executed)
    say({"status": status, "error": error} if error else {"status": status})


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # any other fault is the run's error, never a traceback on the wire
        say({"status": "failed", "error": f"{type(e).__name__}: {e}"})
        sys.exit(1)
