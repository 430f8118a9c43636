/// The source commit this binary was built from, which `gatehouse --version` prints.
///
/// `scripts/package` writes `BuildCommit+Stamp.swift` (git's commit, with `-dirty` when the working tree had
/// changes) before its release build and compiles with `-DGATEHOUSE_STAMPED`, then deletes the file; every other
/// build says `unknown` rather than guess.
enum BuildCommit {
    #if GATEHOUSE_STAMPED
    static let value = stampedBuildCommit
    #else
    static let value = "unknown"
    #endif
}
