import Crypto

/// The code both sides show while pairing, for the user to compare (kdeconnect-kde
/// PairingHandler::verificationKey): SHA-256 over the larger of the two public keys'
/// DER (SubjectPublicKeyInfo, compared byte by byte), then the smaller, then, from
/// protocol 8, the pairing request's timestamp in decimal (CVE-2025-32898: without it, a
/// key pair could be ground to match a code). Shown as its first 8 hex digits: upper case
/// from 8, lower case before, as each version of KDE Connect shows it.
public enum KDEConnectVerificationKey {
    public static func make(ours: [UInt8], theirs: [UInt8], timestamp: Int64?) -> String {
        var (a, b) = (ours, theirs)
        if a.lexicographicallyPrecedes(b) { swap(&a, &b) }
        var hash = SHA256()
        hash.update(data: a)
        hash.update(data: b)
        if let timestamp { hash.update(data: Array(String(timestamp).utf8)) }
        let hex = hash.finalize().prefix(4).map { byte -> String in
            let digits = Array(timestamp == nil ? "0123456789abcdef" : "0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
        return hex.joined()
    }
}
