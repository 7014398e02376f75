import ArgumentParser
import HandoffClient
import HandoffControlAPI
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

struct PasteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "paste",
        abstract: "Write the newest copy of your workstations to stdout (or a file).",
        discussion: """
            Fetches the bytes from the workstation they were copied on, now: nothing moved before. \
            Without --type, the copy's first format (the copying app's preferred); handoffctl clipboard lists them.
            """)

    @OptionGroup var options: ClientOptions

    @Option(name: .long, help: ArgumentHelp("The format to paste, one the copy offers.", valueName: "type"))
    var type: String?

    @Option(name: .long, help: ArgumentHelp("Paste only this copy (its id); fails if something was copied since.", valueName: "id"))
    var id: String?

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to this file instead of stdout (replaced only when the paste is whole).", valueName: "file"))
    var output: String?

    func validate() throws {
        if let type, !ClipboardFormat.isValidType(type) { throw ValidationError("--type must be a MIME type such as text/plain;charset=utf-8, not \(type)") }
        if let id, ClipboardID(id) == nil { throw ValidationError("--id is the copy's 32 hex digits (handoffctl clipboard --json shows it)") }
        if options.json && output == nil { throw ValidationError("--json and the pasted bytes both want stdout; paste into a file with --output") }
    }

    func run() async throws {
        let sink = try StreamEnds.openSink(output ?? "-")
        do {
            let (type, received) = try await options.client.paste(type: type, id: id, into: sink.daemonWritable) { stream in
                var total: Int64 = 0
                while let delivery = try await stream.reader.next() {
                    switch delivery {
                    case .bytes(let bytes):
                        try await sink.file.write(bytes)
                        total += Int64(bytes.readableBytes)
                    case .written(let n):
                        total = n
                    }
                }
                return (stream.info.fields["type"]?.stringValue ?? "", total)
            }
            try sink.commit()
            if options.json {
                Output.out(JSONValue.object(["type": .string(type), "bytes": .integer(received)]).serialized())
            } else if output != nil {
                Output.err("pasted \(StreamProgress.size(Double(received))) of \(type) into \(output!)")
            }
        } catch {
            sink.discard()
            if case HandoffClientError.stream(_, let message) = error { throw CommandFailure(description: "nothing pasted: \(message)") }
            throw error
        }
    }
}
