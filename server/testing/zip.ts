import yauzl from "yauzl";

// Reading zips back in tests (the workspace download, the Files view's zip).

/** The entries of a zip, in archive order, as [path, UTF-8 content]. */
export async function unzip(buf: Buffer): Promise<[string, string][]> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(buf, { lazyEntries: true }, (e, z) => (e ? reject(e) : resolve(z))),
  );
  const out: [string, string][] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on("entry", (entry: yauzl.Entry) => {
      zip.openReadStream(entry, (e, s) => {
        if (e) return reject(e);
        const chunks: Buffer[] = [];
        s.on("data", (c: Buffer) => chunks.push(c));
        s.on("end", () => {
          out.push([entry.fileName, Buffer.concat(chunks).toString("utf8")]);
          zip.readEntry();
        });
      });
    });
    zip.on("end", () => resolve());
    zip.on("error", reject);
    zip.readEntry();
  });
  return out;
}
