import Foundation
import GRDB
import HandoffCore
import HandoffControlAPI
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The activities this workstation and its trusted peers offered, kept in SQLite with a
/// full-text index (FTS5) so that they can be found again (Docs/LocalAPI.md §19). Only
/// offers whose app allowed it (`eligibleForSearch`) are kept, and of userInfo only the
/// keys it opted in; entries older than the retention are dropped.
///
/// Used by the history helper (`handoff-history`) alone, from its one thread: GRDB brings
/// full Foundation and ICU, which handoffd itself never loads (Docs/Architecture.md).
public final class HistoryDatabase {
    private let db: DatabaseQueue
    private let logger: Logger
    public let retentionSeconds: Int64

    /// Opens (or makes) `history.sqlite` in `directory`. A file SQLite cannot read is moved
    /// aside (kept for a look) and a new one started: the history is a convenience, and
    /// losing it must not stop the daemon. A file that is merely busy (the helper of a
    /// handoffd that was killed, still finishing), or a disk that is full or refuses, is
    /// not damaged: that throws, and the history is opened again at its next use.
    public init(directory: String, retentionDays: Int64, logger: Logger) throws {
        self.logger = logger
        retentionSeconds = retentionDays * 86_400
        let path = directory + "/history.sqlite"
        do {
            db = try HistoryDatabase.open(path)
        } catch let error as DatabaseError where Self.notDamage.contains(error.resultCode) {
            throw error
        } catch {
            let aside = path + ".unreadable-\(SystemClock.now().seconds)"
            _ = rename(path, aside)
            logger.error("the history could not be opened; starting a new one and keeping the old file aside",
                         metadata: ["error": "\(error)", "kept": "\(aside)"])
            for suffix in ["-wal", "-shm"] { _ = unlink(path + suffix) }
            db = try HistoryDatabase.open(path)
        }
    }

    /// An in-memory history (tests, benchmarks).
    public init(inMemory retentionDays: Int64 = 30, logger: Logger) throws {
        self.logger = logger
        retentionSeconds = retentionDays * 86_400
        db = try DatabaseQueue()
        try HistoryDatabase.migrator.migrate(db)
    }

    /// What opening meets that says nothing about the file's content: a lock, a full disk
    /// (on which even mapping the WAL index fails, as an I/O error), a refusal.
    static let notDamage: [ResultCode] = [.SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PERM,
                                          .SQLITE_READONLY, .SQLITE_NOMEM, .SQLITE_INTERRUPT, .SQLITE_AUTH]

    private static func open(_ path: String) throws -> DatabaseQueue {
        var config = Configuration()
        config.journalMode = .wal
        // Another helper may still hold the file for a moment (one of a handoffd that was
        // killed ends when it reads the end of its input).
        config.busyMode = .timeout(5)
        // The write-ahead log is checkpointed at 1 MiB and cut back to it after, rather
        // than SQLite's 4 MiB that stays on disk: the history is small, and its log
        // should not be what fills a small home.
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 256")
            try db.execute(sql: "PRAGMA journal_size_limit = 1048576")
        }
        let q = try DatabaseQueue(path: path, configuration: config)
        _ = chmod(path, 0o600)
        // Reading the schema is what tells a file that is not a database; a whole-file
        // check here would read all of it at every start (0.3 s at 100,000 entries).
        try migrator.migrate(q)
        return q
    }

    private static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            // `seq` (the rowid, and so the full-text index's) grows each time an entry is
            // seen again, so newest-first is the index's own order and a search stops after
            // `limit` matches instead of sorting them all; `id` stays what users type.
            try db.create(table: "entry") { t in
                t.primaryKey("seq", .integer)
                t.column("id", .integer).notNull().unique()
                t.column("activityID", .text).notNull()
                t.column("deviceID", .text).notNull()
                t.column("deviceName", .text).notNull()
                t.column("local", .boolean).notNull()
                t.column("activityType", .text).notNull()
                t.column("title", .text).notNull()
                t.column("keywords", .text).notNull()
                t.column("text", .text).notNull()
                t.column("webpageURL", .text)
                t.column("documentPath", .text)
                t.column("document", .blob)
                t.column("firstSeen", .integer).notNull()
                t.column("lastSeen", .integer).notNull()
                t.uniqueKey(["activityID", "deviceID"])
            }
            try db.create(index: "entry_lastSeen", on: "entry", columns: ["lastSeen"])
            try db.execute(sql: "CREATE INDEX entry_deviceName ON entry(deviceName COLLATE NOCASE)")
            try db.create(index: "entry_deviceID", on: "entry", columns: ["deviceID"])
            try createFullTextIndex(db, prefixes: nil)
        }
        m.registerMigration("v2") { db in
            // What an origin deletes its activities by (`persistentIdentifier`).
            try db.alter(table: "entry") { t in t.add(column: "persistentIdentifier", .text) }
            try db.create(index: "entry_persistent", on: "entry", columns: ["deviceID", "persistentIdentifier"])
        }
        m.registerMigration("v3") { db in
            // Indexes of every word's first 2 and 3 letters: the shell searches as the user
            // types ("bu dr"), and a short prefix otherwise walks every word it begins (8 such
            // terms over 100,000 entries: 60 ms; with these, 2 ms). The index grows by about
            // 40 %; the one rebuild takes a few seconds at 100,000 entries.
            try db.dropFTS5SynchronizationTriggers(forTable: "entry_fts")
            try db.drop(table: "entry_fts")
            try createFullTextIndex(db, prefixes: [2, 3])
        }
        return m
    }

    /// The full-text index of `entry`, kept in step with it by triggers (and filled from
    /// what is there when made).
    private static func createFullTextIndex(_ db: Database, prefixes: Set<Int>?) throws {
        try db.create(virtualTable: "entry_fts", using: FTS5()) { t in
            t.synchronize(withTable: "entry")
            t.tokenizer = .unicode61()
            t.prefixes = prefixes
            for column in ["title", "keywords", "text", "webpageURL", "documentPath", "activityType"] { t.column(column) }
        }
    }

    /// Notes an offer (ours or a peer's). Not eligible for search: nothing is kept.
    public func record(_ offer: ActivitySummary, device: PeerDevice, local: Bool, at now: Timestamp = SystemClock.now()) {
        guard let search = offer.search else { return }
        let document = search.document.map { PropertyBinaryEncoding.encode($0.propertyValue) }
        do {
            try db.write { db in
                try db.execute(sql: """
                    INSERT INTO entry (seq, id, activityID, deviceID, deviceName, local, activityType, title, keywords, text, webpageURL,
                                       documentPath, document, firstSeen, lastSeen, persistentIdentifier)
                    VALUES ((SELECT coalesce(max(seq), 0) + 1 FROM entry), (SELECT coalesce(max(id), 0) + 1 FROM entry),
                            ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(activityID, deviceID) DO UPDATE SET
                        seq = (SELECT max(seq) + 1 FROM entry), deviceName = excluded.deviceName, activityType = excluded.activityType, title = excluded.title,
                        keywords = excluded.keywords, text = excluded.text, webpageURL = excluded.webpageURL,
                        documentPath = excluded.documentPath, document = excluded.document, lastSeen = excluded.lastSeen,
                        persistentIdentifier = excluded.persistentIdentifier
                    """, arguments: [offer.id.rawValue, device.id, device.name, local, offer.activityType, offer.title,
                                     search.keywords.joined(separator: "\u{1F}"), search.text, offer.webpageURL,
                                     search.document?.path, document.map { Data($0) }, now.seconds, now.seconds, search.persistentIdentifier])
            }
        } catch {
            logger.warning("could not record an activity in the history", metadata: ["error": "\(error)"])
        }
    }

    /// Newest first. Words match as prefixes, all of them, in the title, keywords,
    /// opted-in text, web page, document path or type.
    public func search(_ q: HistoryQuery, at now: Timestamp = SystemClock.now()) throws -> [HistoryEntry] {
        var conditions = ["entry.lastSeen >= ?"]
        var arguments: StatementArguments = [max(q.since?.seconds ?? Int64.min, now.seconds - retentionSeconds)]
        var pattern: FTS5Pattern?
        if let text = q.text {
            pattern = FTS5Pattern(matchingAllPrefixesIn: text)
            // Words FTS5 cannot take apart match nothing.
            if pattern == nil && text.contains(where: { $0.isLetter || $0.isNumber }) { return [] }
        }
        if let device = q.device {
            // A device ID's prefix as a range, so both halves use an index.
            let prefix = device.uppercased()
            let deviceCondition = "(entry.deviceName = ? COLLATE NOCASE OR entry.deviceID BETWEEN ? AND ?)"
            let deviceArguments: StatementArguments = [device, prefix, prefix + "~"]
            // A device with no entries at all answers at once instead of reading every match.
            let known = try db.read { db in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM entry WHERE \(deviceCondition.replacingOccurrences(of: "entry.", with: "")))",
                                  arguments: deviceArguments) ?? false
            }
            if !known { return [] }
            conditions.append(deviceCondition)
            _ = arguments.append(contentsOf: deviceArguments)
        }
        _ = arguments.append(contentsOf: [q.limit])
        let sql: String
        if let pattern {
            // Walk the index's matches newest first (rowid order) and stop at the limit.
            sql = "SELECT entry.* FROM entry_fts JOIN entry ON entry.seq = entry_fts.rowid WHERE entry_fts MATCH ? AND "
                + conditions.joined(separator: " AND ") + " ORDER BY entry_fts.rowid DESC LIMIT ?"
            arguments = [pattern] + arguments
        } else {
            sql = "SELECT * FROM entry WHERE \(conditions.joined(separator: " AND ")) ORDER BY seq DESC LIMIT ?"
        }
        return try db.read { db in
            try Row.fetchAll(db, sql: sql, arguments: arguments).map(HistoryDatabase.entry)
        }
    }

    /// The entry and its document reference (to reopen it).
    public func entry(_ id: Int64) throws -> (HistoryEntry, DocumentReference?)? {
        try db.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM entry WHERE id = ?", arguments: [id]) else { return nil }
            let blob: Data? = row["document"]
            let document = blob.flatMap { try? PropertyBinaryEncoding.decode([UInt8]($0)) }.flatMap { try? DocumentReference(propertyValue: $0) }
            return (HistoryDatabase.entry(row), document)
        }
    }

    /// Drops what is older than the retention; returns how many.
    @discardableResult
    public func expire(at now: Timestamp = SystemClock.now()) -> Int {
        (try? db.write { db in
            try db.execute(sql: "DELETE FROM entry WHERE lastSeen < ?", arguments: [now.seconds - retentionSeconds])
            return db.changesCount
        }) ?? 0
    }

    /// Forgets everything; returns how many entries there were.
    public func clear() throws -> Int {
        try db.write { db in
            try db.execute(sql: "DELETE FROM entry")
            return db.changesCount
        }
    }

    /// Forgets the entries of one origin's activities with these persistent identifiers,
    /// or all of that origin's (`identifiers` nil); returns how many.
    public func forget(device: String, identifiers: [String]?) throws -> Int {
        try db.write { db in
            if let identifiers {
                var removed = 0
                for id in Set(identifiers) {
                    try db.execute(sql: "DELETE FROM entry WHERE deviceID = ? AND persistentIdentifier = ?", arguments: [device, id])
                    removed += db.changesCount
                }
                return removed
            }
            try db.execute(sql: "DELETE FROM entry WHERE deviceID = ?", arguments: [device])
            return db.changesCount
        }
    }

    public func count() throws -> Int { try db.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM entry") ?? 0 } }

    private static func entry(_ row: Row) -> HistoryEntry {
        let keywords: String = row["keywords"]
        return HistoryEntry(
            id: row["id"], activityID: row["activityID"], activityType: row["activityType"], title: row["title"],
            keywords: keywords.isEmpty ? [] : keywords.split(separator: "\u{1F}").map(String.init), webpageURL: row["webpageURL"],
            documentPath: row["documentPath"], device: PeerDevice(id: row["deviceID"], name: row["deviceName"]), local: row["local"],
            firstSeen: Timestamp(seconds: row["firstSeen"]), lastSeen: Timestamp(seconds: row["lastSeen"]))
    }
}
