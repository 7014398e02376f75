import ArgumentParser
import HandoffControlAPI
import HandoffCore

struct ClipboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clipboard",
        abstract: "Show the newest copy of your workstations (its formats, never its bytes), or clear this one's.",
        discussion: "A copy on any of your linked workstations is announced to the others; its bytes move only when pasted (handoffctl paste).")

    @OptionGroup var options: ClientOptions

    @Flag(name: .long, help: "Withdraw this workstation's copy, so no other can paste it.")
    var clear = false

    func run() async throws {
        let record = clear ? try await options.client.withdrawClipboard() : try await options.client.clipboard()
        if options.json {
            Output.out(ClipboardRecord.newestJSON(record).prettySerialized())
            return
        }
        guard let record else {
            Output.out("nothing copied to paste")
            return
        }
        let origin = record.local ? "this workstation" : (record.device.name.isEmpty ? record.device.id : record.device.name)
        let now = SystemClock.now()
        Output.out("copied on \(origin) \(Self.span(record.copiedAt.nanoseconds(until: now))) ago, pastable for \(Self.span(now.nanoseconds(until: record.expiresAt))) more")
        for format in record.formats { Output.out("  \(format.type)  \(format.size.map { StreamProgress.size(Double($0)) } ?? "size not known before pasting")") }
    }

    /// "12 s", "9 min", as people say it.
    static func span(_ nanoseconds: Int64) -> String {
        let seconds = max(0, nanoseconds / 1_000_000_000)
        return seconds < 90 ? "\(seconds) s" : "\((seconds + 30) / 60) min"
    }
}
