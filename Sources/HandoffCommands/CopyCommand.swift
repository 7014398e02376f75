import ArgumentParser
import HandoffClient
import HandoffControlAPI
import HandoffCore
#if canImport(Glibc)
import Glibc
#endif

struct CopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy stdin for your other workstations to paste (handoffctl paste there).",
        discussion: """
            handoffd keeps the bytes (16 MiB at most by default) and announces the copy to your linked \
            workstations as its type and size; the bytes leave only when one of them pastes. Made for \
            scripts and machines without a desktop; on a desktop, copying in any app does the same.
            """)

    @OptionGroup var options: ClientOptions

    @Option(name: .long, help: ArgumentHelp("The MIME type of what is copied.", valueName: "type"))
    var type = "text/plain;charset=utf-8"

    func validate() throws {
        guard ClipboardFormat.isValidType(type) else { throw ValidationError("--type must be a MIME type such as text/plain;charset=utf-8 or image/png, not \(type)") }
    }

    func run() async throws {
        let stdin = BlockingFile(fd: 0, name: "stdin")
        let record: ClipboardRecord
        do {
            record = try await options.client.copy(type: type) { writer in
                while true {
                    let bytes = try await stdin.read()
                    if bytes.readableBytes == 0 { break }
                    try await writer.write(bytes)
                }
            }
        } catch HandoffClientError.stream(_, let message) {
            throw CommandFailure(description: "nothing was copied: \(message)")
        }
        if options.json {
            Output.out(ClipboardRecord.newestJSON(record).prettySerialized())
        } else {
            let size = StreamProgress.size(Double(record.formats.first?.size ?? 0))
            Output.out("copied \(size) as \(type); paste it on another workstation with handoffctl paste")
        }
    }
}
