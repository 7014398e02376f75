import Foundation
import HandoffCore
@testable import HandoffDaemon
import Testing

@Suite("Synced folders and document references")
struct SyncedRootsTests {
    @Test func syncthingFoldersAreRead() {
        let xml = """
            <configuration><folder id="a-b" label="x" path="/home/ann/Sync"></folder>
            <folder label='Q &amp; A' id='q&amp;a' path='~/Q A'><device id="X"/></folder>
            <folder id="" path="/nope"></folder><gui/></configuration>
            """
        #expect(SyncthingConfig.folders(xml) == [.init(id: "a-b", path: "/home/ann/Sync"), .init(id: "q&a", path: "~/Q A")])
        #expect(SyncthingConfig.folders("<folder id=\"unterminated").isEmpty)
    }

    @Test func nextcloudFoldersAreRead() {
        let cfg = """
            [General]
            launchOnSystemStartup=true
            [Accounts]
            0\\url=https://cloud.example.org
            0\\dav_user=ann
            0\\Folders\\1\\localPath=/home/ann/Nextcloud/
            0\\Folders\\1\\targetPath=/
            0\\Folders\\2\\localPath=/home/ann/Work
            0\\Folders\\2\\targetPath=/Work
            """
        #expect(NextcloudConfig.folders(cfg) == [
            .init(localPath: "/home/ann/Nextcloud", identity: "ann@https://cloud.example.org/"),
            .init(localPath: "/home/ann/Work", identity: "ann@https://cloud.example.org/Work"),
        ])
    }

    @Test func discoveryLocatesAndNeverLeavesARoot() throws {
        let base = NSTemporaryDirectory() + "/roots-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: base + "/state/syncthing", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: base + "/config/Nextcloud", withIntermediateDirectories: true)
        for d in ["Sync/inner", "Cloud", "Mine", "Outside"] { try fm.createDirectory(atPath: base + "/" + d, withIntermediateDirectories: true) }
        try "<folder id=\"st\" path=\"\(base)/Sync\"></folder><folder id=\"inner\" path=\"\(base)/Sync/inner\"></folder>"
            .write(toFile: base + "/state/syncthing/config.xml", atomically: true, encoding: .utf8)
        try "[Accounts]\n0\\url=https://c.test\n0\\dav_user=u\n0\\Folders\\1\\localPath=\(base)/Cloud\n0\\Folders\\1\\targetPath=/\n"
            .write(toFile: base + "/config/Nextcloud/nextcloud.cfg", atomically: true, encoding: .utf8)
        let roots = SyncedRoots.discover(configured: [("mine", base + "/Mine")], home: base, stateHome: base + "/state", configHome: base + "/config")
        #expect(Set(roots.roots.map(\.id.description)) == ["syncthing:st", "syncthing:inner", "nextcloud:u@https://c.test/", "configured:mine"])
        let real = SyncedRoots.resolved(base)
        #expect(roots.locate(real + "/Sync/a/b.txt")?.1 == "a/b.txt")
        #expect(roots.locate(real + "/Sync/inner/c.txt")?.0.id == SyncedRootID(kind: "syncthing", id: "inner"), "the deepest root wins")
        #expect(roots.locate(real + "/Mine/x")?.0.id.kind == "configured")
        #expect(roots.locate(real + "/SyncX/x") == nil, "a sibling with the same prefix is not inside")

        // A reference maps back only inside its root; a symlink out of it is not followed.
        try "hello".write(toFile: base + "/Sync/doc.txt", atomically: true, encoding: .utf8)
        let (file, reference) = try DocumentLocator.reference(for: base + "/Sync/doc.txt", roots: roots)
        #expect(file == real + "/Sync/doc.txt" && reference.path == "doc.txt" && reference.size == 5)
        #expect(DocumentLocator.local(reference, roots: roots) == .same(real + "/Sync/doc.txt"))
        try "other".write(toFile: base + "/Outside/doc.txt", atomically: true, encoding: .utf8)
        try fm.removeItem(atPath: base + "/Sync/doc.txt")
        try fm.createSymbolicLink(atPath: base + "/Sync/doc.txt", withDestinationPath: base + "/Outside/doc.txt")
        guard case .unmapped(let why) = DocumentLocator.local(reference, roots: roots) else { Issue.record("followed a link out"); return }
        #expect(why.contains("leads out of the synced folder"))
        // Outside every root: named by its file name alone, always fetched.
        let (_, loose) = try DocumentLocator.reference(for: base + "/Outside/doc.txt", roots: roots)
        #expect(loose.root == nil && loose.path == "doc.txt")
        guard case .unmapped = DocumentLocator.local(loose, roots: roots) else { Issue.record("expected unmapped"); return }
    }

    @Test func referencesFromPeersAreStrict() throws {
        let hash = PropertyValue.data([UInt8](repeating: 1, count: 32))
        func ref(_ path: String, root: Bool = true) -> PropertyValue {
            var d: [String: PropertyValue] = ["path": .string(path), "size": .integer(3), "sha256": hash]
            if root { d["root"] = .dictionary(["kind": .string("syncthing"), "id": .string("x")]) }
            return .dictionary(d)
        }
        #expect(try DocumentReference(propertyValue: ref("a/b.txt")).path == "a/b.txt")
        for bad in ["../x", "a/../../x", "/etc/passwd", "a//b", "./a", "a/.", "", "a/\u{0}b"] {
            #expect(throws: ValidationError.self, "\(bad)") { try DocumentReference(propertyValue: ref(bad)) }
        }
        #expect(throws: ValidationError.self) { try DocumentReference(propertyValue: ref("a/b", root: false)) }
        #expect(throws: ValidationError.self) {
            try DocumentReference(propertyValue: .dictionary(["path": .string("a"), "size": .integer(1), "sha256": .data([1])]))
        }
        #expect(throws: ValidationError.self) {
            try DocumentReference(propertyValue: .dictionary(["path": .string("a"), "size": .integer(1), "sha256": hash,
                                                             "root": .dictionary(["kind": .string("dropbox"), "id": .string("x")])]))
        }
        let r = try DocumentReference(propertyValue: ref("n/x.txt"))
        #expect(try DocumentReference(propertyValue: r.propertyValue) == r)
    }
}
