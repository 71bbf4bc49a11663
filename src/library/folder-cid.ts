// A folder's collection CID, read from disk, as `warrant cid DIR` reaches it without the rest of
// the library. The package's index exports the same function.
export { collectionCidOfPath } from "../adapters/fs/collection-files.js";
