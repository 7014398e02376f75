import HandoffCore
import HandoffControlAPI
#if canImport(Glibc)
import Glibc
#endif

/// Who serves an activity's continuation streams at the origin.
public enum StreamSource: Sendable, Equatable {
    /// The owning app, through its event session.
    case session(String)
    /// The daemon itself, from a file read when the stream opens (`--stream-file`).
    case file(String)
    /// The daemon itself, from the activity's document (its resolved path: a symbolic
    /// link put there since is not followed).
    case document(String)
}

/// Which activities may claim to serve streams: an app-owned one (the app answers), or a
/// daemon-owned one with a stream file. A daemon-owned activity without a file could only
/// ever refuse, so it is turned away when made rather than when continued.
enum StreamSourceRules {
    static func check(_ a: Activity, owner: ActivityOwner, streamFile: String?) throws(HandoffError) {
        if let streamFile {
            guard owner == .daemon else {
                throw HandoffError(.badRequest, code: "bad_request",
                               message: "streamFile is for activities without an owning app; an attached app serves its own streams")
            }
            try checkFile(streamFile)
        } else if owner == .daemon && a.supportsContinuationStreams {
            throw HandoffError.invalid(ValidationError(field: "supportsContinuationStreams",
                problem: "an activity without an owning app can serve streams only from a file: set streamFile (handoffctl: --stream-file), or attach"))
        }
    }

    /// The file must be named absolutely (the daemon's working directory is not the
    /// caller's) and be a regular file now; its bytes are read only when a stream opens.
    static func checkFile(_ path: String) throws(HandoffError) {
        guard path.hasPrefix("/") else {
            throw HandoffError.invalid(ValidationError(field: "streamFile", problem: "must be an absolute path"))
        }
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw HandoffError.invalid(ValidationError(field: "streamFile", problem: "\(path): \(String(cString: strerror(errno)))"))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw HandoffError.invalid(ValidationError(field: "streamFile", problem: "\(path) is not a regular file"))
        }
    }
}
