// Package code reads a workspace's source for the agent's questions about
// code: a ranked repository map, a file's outline, a file by line range,
// and a search. Nothing here writes, and nothing runs code of the
// workspace's.
//
// # Where the reads run
//
// On the host, on the mounted tree, through an *os.Root: every open is
// confined to the workspace directory by the kernel-facing resolution of
// os.Root, which refuses ".." and symbolic links that lead out of it, also
// when a component is swapped for such a link while we read (the kennel
// writes the tree and is hostile). On top of that, paths the model gives
// are checked before any open: absolute paths, "..", control characters,
// .git and .fetch are refused, and a path through a symbolic link is
// refused with the link's target when that stays inside (so the model can
// read that path instead). Files are opened non-blocking and must be
// regular files, so a FIFO or device planted in the tree cannot hang a
// read. The walk never follows links.
//
// Why not read through the kennel (an exec of cat/grep per call)? Speed:
// an exec costs about 100 ms, and the repository map, rebuilt for the
// system prompt of every turn whose tree changed, reads hundreds of files;
// on the host the map of Fetch's own repository is built in well under
// 500 ms cold and a few milliseconds when cached. No git runs: .gitignore
// files are parsed here (ignore.go) and HEAD is read as a plain file.
//
// # Ranking
//
// The map ranks files and symbols the way aider's repo map does, without
// the PageRank step: symbols come from a real parser (tree-sitter for Go,
// Python, JavaScript, TypeScript, Rust and Java; a line-based fallback for
// other text files), references are the identifiers of every other file.
// A symbol's score is the number of other files that mention its name,
// divided by how many files define that name (so New, String or init,
// defined everywhere, count little); a file's score is the sum of its
// symbols'. A plain weighted in-degree keeps the map deterministic and
// linear in the size of the tree; PageRank over the same graph mostly
// reorders the tail, which the token budget cuts anyway. The map is cut
// to a token budget counted with internal/tokens.
//
// # Bounds
//
// Everything is bounded: files walked (maxWalk), bytes read per file and
// in all (maxParseFile, maxParseTotal), parse time per file (parseTimeout),
// lines and bytes of a read (MaxReadLines, MaxReadBytes), matches and
// bytes of a search. What reaches the model is valid UTF-8 without control
// characters; long lines are cut.
//
// # Concurrency
//
// A *Library is safe for concurrent use; it caches each workspace's map
// by a fingerprint of its tree (paths, sizes and modification times of
// the files walked, and HEAD), so a map is rebuilt only when the tree
// changed, and then reparses only the files that changed.
//
// code imports internal/tokens and no other package of Fetch's.
package code
