import Foundation
import HandoffCore
import HandoffTestSupport
import Testing

/// The activity model's later fields (referrer, persistent and target content identifiers,
/// prediction, and the search attributes: description, display name, thumbnail) from the
/// CLI on one workstation to the payload and the history on another, deleting saved
/// activities by persistent identifier everywhere, and the warning for a payload over the
/// advised size.
extension WorkstationTests {
@Suite struct ActivityModelTests {
    let across = AcrossWorkstationsTests()

    @Test func theWholeModelCrossesAndIsSearchable() async throws {
        try await NetnsRun.with(["a", "b"]) { net in
            try await net.startDaemon("a")
            try await net.startDaemon("b")
            try await net.pair("a", "b")
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 100)
            let thumbnail = net.directory + "/thumb.png"
            try Data(png).write(to: URL(fileURLWithPath: thumbnail))
            let made = try await net.ctl("a", "become-current", "--type", "org.example.notes.edit", "--title", "Shopping",
                                         "--referrer-url", "https://example.com/from", "--persistent-id", "note/42",
                                         "--target-content-id", "window:notes", "--prediction", "--search",
                                         "--description", "Milk eggs and a walrus", "--display-name", "Groceries list",
                                         "--thumbnail", thumbnail)
            #expect(made.status == 0 && made.stderr.isEmpty, "\(made)")
            try await eventually(10, "the offer to reach b") { try await net.ctl("b", "list").stdout.contains("org.example.notes.edit") }

            let got = try across.json(try await net.ctl("b", "continue", "--json"))
            #expect(got["referrerURL"] == .string("https://example.com/from"))
            #expect(got["persistentIdentifier"] == .string("note/42"))
            #expect(got["targetContentIdentifier"] == .string("window:notes"))
            #expect(got["eligibleForPrediction"] == .bool(true))
            #expect(got["contentDescription"] == .string("Milk eggs and a walrus"))
            #expect(got["displayName"] == .string("Groceries list"))
            #expect(got["thumbnail"] == .string(Base64.encode(png)))

            // The history on b finds it by its search attributes.
            try await eventually(10, "b's history to find it by its description") {
                try await net.ctl("b", "history", "walrus").stdout.contains("Shopping")
            }
            #expect(try await net.ctl("b", "history", "groceries").stdout.contains("Shopping"))

            // Another of a's activities, and one of b's own with the same persistent
            // identifier: a deletes note/42 everywhere, and only its own goes.
            _ = try await net.ctl("a", "become-current", "--type", "org.example.notes.edit", "--title", "Errands", "--search", "--persistent-id", "note/43")
            _ = try await net.ctl("b", "become-current", "--type", "org.example.notes.edit", "--title", "Bobs note", "--search", "--persistent-id", "note/42")
            try await eventually(10, "b's history to have Errands") { try await net.ctl("b", "history", "errands").stdout.contains("Errands") }
            let forgot = try await net.ctl("a", "history", "--delete", "note/42")
            #expect(forgot.status == 0 && forgot.stdout.contains("forgot 1 entry here; asked 1 workstation"), "\(forgot)")
            try await eventually(10, "b to forget a's note/42") { try await net.ctl("b", "history", "walrus").stdout.contains("nothing matches") }
            #expect(try await net.ctl("a", "history", "walrus").stdout.contains("nothing matches"))
            #expect(try await net.ctl("b", "history", "errands").stdout.contains("Errands"), "a's other activity stays")
            #expect(try await net.ctl("b", "history", "bobs").stdout.contains("Bobs note"), "b's own note/42 stays")
            let all = try await net.ctl("a", "history", "--delete-all-mine")
            #expect(all.status == 0, "\(all)")
            try await eventually(10, "b to forget all of a's") { try await net.ctl("b", "history", "errands").stdout.contains("nothing matches") }
            #expect(try await net.ctl("b", "history", "bobs").stdout.contains("Bobs note"))

            // A field is cleared by update; one given and cleared at once is refused.
            let cleared = try await net.ctl("a", "update", "--clear", "description", "--clear", "thumbnail")
            #expect(cleared.status == 0 && !cleared.stdout.contains("walrus") && !cleared.stdout.contains("thumbnail:"), "\(cleared)")
            let both = try await net.ctl("a", "update", "--description", "x", "--clear", "description")
            #expect(both.status != 0 && both.stderr.contains("contradict"), "\(both)")

            // Bad values are refused with the field named, and change nothing.
            for (flag, value, field) in [("--referrer-url", "file:///etc/passwd", "referrerURL"), ("--persistent-id", "a\u{1}b", "persistentIdentifier")] {
                let r = try await net.ctl("a", "become-current", "--type", "org.example.bad", flag, value)
                #expect(r.status != 0 && r.stderr.contains(field), "\(r)")
            }
            let notImage = net.directory + "/not.png"
            try Data("GIF89a".utf8).write(to: URL(fileURLWithPath: notImage))
            let badThumb = try await net.ctl("a", "become-current", "--type", "org.example.bad", "--thumbnail", notImage)
            #expect(badThumb.status != 0 && badThumb.stderr.contains("PNG or JPEG"), "\(badThumb)")

            // Over the advised 3 KB: made, with a note (the header and the field say it to apps).
            let big = try await net.ctl("a", "become-current", "--type", "org.example.big", "--info", "text=" + String(repeating: "x", count: 4000))
            #expect(big.status == 0 && big.stderr.contains("note: the encoded activity is") && big.stderr.contains("over the advised 3072"), "\(big)")
            let shown = try across.json(try await net.ctl("a", "current", "--json"))
            #expect(shown["warnings"]?.arrayValue?.count == 1, "\(shown)")
            #expect(try across.json(try await net.ctl("b", "continue", "--json"))["activityType"] == .string("org.example.big"))
        }
    }
}
}
