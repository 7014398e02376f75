import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

/// A new identity for this workstation (`handoffctl pair --new-identity`, LocalAPI.md
/// §17.1): what belonged to the old one (its key and certificate, the account it was in,
/// whom it trusted, the advertisement key, what it kept for others) moves into a folder of
/// its own under `retired/`, never deleted; the next start makes a new identity. The
/// activities, the history and apps' state stay: they are the user's, not the identity's.
enum IdentityRetirement {
    static let files = [
        DeviceIdentity.keyFile, DeviceIdentity.certificateFile, AccountStore.fileName, AdvertisementKeyStore.fileName,
        TrustStore.fileName, KeptOfferStore.fileName,
    ]

    /// Where the files of identity `id`, retired at `now`, go: `retired/ID7-20261128T134223Z`.
    static func folder(stateDirectory: String, id: DeviceID, at now: Timestamp) -> String {
        let stamp = now.rfc3339.prefix(19).replacing("-", with: "").replacing(":", with: "")
        return stateDirectory + "/retired/" + id.shortID + "-" + stamp + "Z"
    }

    /// Moves the files into `folder` (made 0700); returns the names moved. Once the
    /// identity's two files are gone, the next start makes a new identity.
    static func retire(stateDirectory: String, into folder: String) throws -> [String] {
        try AtomicFile.makeDirectories(folder)
        var moved: [String] = []
        for name in files where access(stateDirectory + "/" + name, F_OK) == 0 {
            guard rename(stateDirectory + "/" + name, folder + "/" + name) == 0 else {
                throw AtomicFile.Failure(description: "cannot move \(name) into \(folder): \(AtomicFile.errnoText())")
            }
            moved.append(name)
        }
        // The renames live in both directories: a power cut must not undo half of them.
        for dir in [folder, stateDirectory] {
            let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 {
                _ = fsync(fd)
                close(fd)
            }
        }
        return moved
    }
}
