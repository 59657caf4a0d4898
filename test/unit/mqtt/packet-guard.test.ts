/** The front door's packet sizes read before aedes's parser (services/mqtt/packet-guard.ts), chunk by chunk as TCP delivers them. */
import { PacketSizes } from "../../../services/mqtt/packet-guard";

/** A fixed header of `type` announcing `length` bytes (MQTT 3.1.1, 2.2.3), then the body. */
function packet(type: number, length: number, body = true): Buffer {
  const header = [type << 4];
  let n = length;
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    header.push(byte);
  } while (n > 0);
  return Buffer.concat([Buffer.from(header), body ? Buffer.alloc(length) : Buffer.alloc(0)]);
}

const CONNECT = 1;
const PUBLISH = 3;
const MAX = 1024 * 1024;

function accepted(): PacketSizes {
  const sizes = new PacketSizes(MAX);
  expect(sizes.feed(packet(CONNECT, 40))).toBeNull();
  sizes.accept();
  return sizes;
}

describe("the front door's packet sizes", () => {
  it("lets packets up to the limit through, however the chunks cut them", () => {
    const sizes = accepted();
    const stream = Buffer.concat([packet(PUBLISH, 0), packet(PUBLISH, 127), packet(PUBLISH, 128), packet(12, 0), packet(PUBLISH, MAX - 4)]);
    // Chunks of 7 bytes: every header is cut somewhere.
    for (let i = 0; i < stream.length; i += 7) expect(sizes.feed(stream.subarray(i, i + 7))).toBeNull();
  });

  it("refuses a packet announcing 100 MB at its header, even split byte by byte", () => {
    const sizes = accepted();
    const header = packet(PUBLISH, 100 * 1024 * 1024, false);
    expect(header).toHaveLength(5);
    const verdicts = [...header].map((b) => sizes.feed(Buffer.from([b])));
    expect(verdicts.slice(0, 4)).toEqual([null, null, null, null]);
    expect(verdicts[4]).toEqual({ kind: "too large", bytes: 100 * 1024 * 1024 + 5 });
  });

  it("refuses a packet one byte over the limit, after packets that passed in the same chunk", () => {
    const sizes = accepted();
    expect(sizes.feed(Buffer.concat([packet(PUBLISH, 10), packet(PUBLISH, MAX - 3, false)]))).toEqual({ kind: "too large", bytes: MAX + 1 });
  });

  it("refuses a remaining length of more than 4 bytes", () => {
    const sizes = accepted();
    expect(sizes.feed(Buffer.from([PUBLISH << 4, 0x80, 0x80, 0x80, 0x80]))).toEqual({ kind: "malformed" });
  });

  it("refuses a first packet other than CONNECT, and more than the limit before the CONNECT is accepted", () => {
    expect(new PacketSizes(MAX).feed(packet(PUBLISH, 10))).toEqual({ kind: "not CONNECT first" });
    const sizes = new PacketSizes(MAX);
    expect(sizes.feed(packet(CONNECT, 100))).toBeNull();
    expect(sizes.feed(packet(PUBLISH, MAX / 2))).toBeNull();
    expect(sizes.feed(packet(PUBLISH, MAX / 2))).toEqual({ kind: "too much before CONNECT accepted" });
  });
});
