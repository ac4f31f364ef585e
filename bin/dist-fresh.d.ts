/** "fresh", "stale" (built, but src/ changed since) or "missing", for the package at `root`. */
export function distState(root: string): "fresh" | "stale" | "missing";
