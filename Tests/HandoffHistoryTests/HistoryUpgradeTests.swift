import Foundation
import GRDB
import HandoffControlAPI
import HandoffCore
import HandoffHistory
import Logging
import Testing

/// A history written by an earlier version is upgraded in place when the helper opens it:
/// every entry stays, and searches use what the upgrade adds.
@Suite("History upgrade")
struct HistoryUpgradeTests {
    /// The schema as migrations v1 and v2 left it (read off a database they made).
    static let version2 = [
        #"CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)"#,
        #"CREATE TABLE "entry" ("seq" INTEGER PRIMARY KEY, "id" INTEGER NOT NULL UNIQUE, "activityID" TEXT NOT NULL, "deviceID" TEXT NOT NULL, "deviceName" TEXT NOT NULL, "local" BOOLEAN NOT NULL, "activityType" TEXT NOT NULL, "title" TEXT NOT NULL, "keywords" TEXT NOT NULL, "text" TEXT NOT NULL, "webpageURL" TEXT, "documentPath" TEXT, "document" BLOB, "firstSeen" INTEGER NOT NULL, "lastSeen" INTEGER NOT NULL, "persistentIdentifier" TEXT, UNIQUE ("activityID", "deviceID"))"#,
        #"CREATE INDEX "entry_lastSeen" ON "entry"("lastSeen")"#,
        #"CREATE INDEX entry_deviceName ON entry(deviceName COLLATE NOCASE)"#,
        #"CREATE INDEX "entry_deviceID" ON "entry"("deviceID")"#,
        #"CREATE VIRTUAL TABLE "entry_fts" USING fts5(title, keywords, text, webpageURL, documentPath, activityType, tokenize='''unicode61''', content='entry', content_rowid='seq')"#,
        #"CREATE TRIGGER "__entry_fts_ai" AFTER INSERT ON "entry" BEGIN INSERT INTO "entry_fts"("rowid", "title", "keywords", "text", "webpageURL", "documentPath", "activityType") VALUES (new."seq", new."title", new."keywords", new."text", new."webpageURL", new."documentPath", new."activityType"); END"#,
        #"CREATE TRIGGER "__entry_fts_ad" AFTER DELETE ON "entry" BEGIN INSERT INTO "entry_fts"("entry_fts", "rowid", "title", "keywords", "text", "webpageURL", "documentPath", "activityType") VALUES('delete', old."seq", old."title", old."keywords", old."text", old."webpageURL", old."documentPath", old."activityType"); END"#,
        #"CREATE TRIGGER "__entry_fts_au" AFTER UPDATE ON "entry" BEGIN INSERT INTO "entry_fts"("entry_fts", "rowid", "title", "keywords", "text", "webpageURL", "documentPath", "activityType") VALUES('delete', old."seq", old."title", old."keywords", old."text", old."webpageURL", old."documentPath", old."activityType"); INSERT INTO "entry_fts"("rowid", "title", "keywords", "text", "webpageURL", "documentPath", "activityType") VALUES (new."seq", new."title", new."keywords", new."text", new."webpageURL", new."documentPath", new."activityType"); END"#,
        #"CREATE INDEX "entry_persistent" ON "entry"("deviceID", "persistentIdentifier")"#,
        #"INSERT INTO grdb_migrations VALUES ('v1'), ('v2')"#,
    ]

    @Test func aVersion2HistoryKeepsEveryEntryAndGainsPrefixIndexes() throws {
        let dir = NSTemporaryDirectory() + "history-upgrade-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let now = Timestamp(seconds: 1_800_000_000)
        do {
            let old = try DatabaseQueue(path: dir + "/history.sqlite")
            try old.write { db in
                for sql in Self.version2 { try db.execute(sql: sql) }
                for (n, title) in ["Budget draft for spring", "Holiday photos", "Budget review"].enumerated() {
                    try db.execute(sql: """
                        INSERT INTO entry (seq, id, activityID, deviceID, deviceName, local, activityType, title, keywords, text, firstSeen, lastSeen)
                        VALUES (?, ?, ?, 'DESKDESK-1', 'desk', 1, 'org.example.edit', ?, '', '', ?, ?)
                        """, arguments: [n + 1, n + 1, String(format: "%032x", n), title, now.seconds, now.seconds])
                }
            }
        }
        let history = try HistoryDatabase(directory: dir, retentionDays: 30, logger: Logger(label: "test"))
        #expect(try history.count() == 3, "every entry stays")
        #expect(try history.search(HistoryQuery(text: "bu dr"), at: now).map(\.title) == ["Budget draft for spring"])
        #expect(try history.search(HistoryQuery(text: "budget"), at: now).count == 2)
        // What is recorded after the upgrade is found too: the index follows the table.
        let a = Activity(id: .random(), activityType: "org.example.edit", title: "Budget drawing", eligibleForSearch: true,
                         createdAt: now, origin: DeviceRef(name: "desk"))
        history.record(ActivitySummary(a, payloadSize: 1), device: PeerDevice(id: "DESKDESK-1", name: "desk"), local: true, at: now)
        #expect(try history.search(HistoryQuery(text: "bu dr"), at: now).count == 2)
        let sql = try DatabaseQueue(path: dir + "/history.sqlite").read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'entry_fts'")
        }
        #expect(sql?.contains("prefix='2 3'") == true, "\(sql ?? "no index")")
    }
}
