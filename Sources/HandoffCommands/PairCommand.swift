import ArgumentParser
import HandoffCore
import HandoffControlAPI
#if canImport(Glibc)
import Glibc
#endif

struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair with another of your workstations by a 6-digit code.",
        discussion: """
            Run `handoffctl pair` on both workstations within 2 minutes. They find each other on the \
            local network (or give one the other's address with --address HOST:PORT), and both show \
            the same 6-digit code: check that they do, and confirm on both. A script passes the code \
            it was shown with --code; without a terminal and without --code, confirm later with \
            `handoffctl pair --code NNNNNN`. `handoffctl trust ID` still works for those who prefer IDs. \
            A workstation removed from your account pairs again with --new-identity: it gets a new identity \
            (the old one's files are kept aside in handoffd's state folder) and pairs as a new workstation.
            """)

    @OptionGroup var options: ClientOptions

    @Option(help: ArgumentHelp("Dial this workstation to pair (its port is in `handoffctl status` there).", valueName: "host:port"))
    var address: String?

    @Option(help: ArgumentHelp("Confirm with this code (the one both screens show) instead of asking.", valueName: "NNNNNN"))
    var code: String?

    @Flag(help: "Close the pairing window.")
    var cancel = false

    @Flag(name: .customLong("new-identity"), help: "First give this workstation a new identity (handoffd restarts; the old identity's files are kept aside): how a workstation removed from your account pairs again.")
    var newIdentity = false

    @Flag(help: "With --new-identity: even while this workstation is still a member of your account (remove its old identity there afterwards).")
    var force = false

    func validate() throws {
        if force && !newIdentity { throw ValidationError("--force goes with --new-identity") }
        if cancel && newIdentity { throw ValidationError("--cancel and --new-identity do not go together") }
    }

    func run() async throws {
        let client = options.client
        if cancel {
            let s = try await client.cancelPairing()
            Output.out(options.json ? s.json.prettySerialized() : "pairing window closed")
            return
        }
        if newIdentity {
            // A window open here would pair the identity about to be set aside.
            _ = try? await client.cancelPairing()
            let renewal = try await client.renewIdentity(force: force)
            if !options.json {
                Output.out("The old identity \(renewal.previousID) is kept in \(renewal.keptAt); handoffd restarts with a new one.")
            }
            let status = try await client.waitForNewIdentity(previous: renewal.previousID)
            if !options.json { Output.out("This workstation is now \(status.deviceID ?? "?").") }
        }
        try await client.withSession { session in
            var progress = Progress(command: self)
            let opened = try await client.openPairing(address: address)
            if !options.json {
                Output.out("Pairing for 2 minutes: run `handoffctl pair` on your other workstation too\(address.map { " (dialling \($0))" } ?? "").")
            }
            if try await progress.step(opened) { return }
            do {
                for try await event in session.events {
                    if case .pairing(let s) = event, try await progress.step(s) { return }
                }
            } catch let f as CommandFailure {
                throw f
            } catch {
                throw CommandFailure(description: "lost the connection to handoffd: \(error)")
            }
            throw CommandFailure(description: "handoffd closed the event stream (was it stopped?)")
        }
    }

    /// What the command has said and done so far, so each status prints once.
    struct Progress {
        let command: PairCommand
        var shownCode: String?
        var confirmed: String?
        var lastMessage: String?

        /// True when pairing is over (paired); throws when it failed for good.
        mutating func step(_ s: PairingStatus) async throws -> Bool {
            let json = command.options.json
            switch s.state {
            case .paired:
                let name = s.peer?.name ?? "the other workstation"
                Output.out(json ? s.json.prettySerialized() : "paired with \(name) (\(s.peer?.id ?? "?")): it can now see and continue your activities, and you its")
                return true
            case .closed:
                throw CommandFailure(description: "the pairing window was closed (cancelled with `handoffctl pair --cancel`?)")
            case .failed:
                let message = s.message ?? "pairing failed"
                guard s.expiresAt != nil else { throw CommandFailure(description: message) }
                if message != lastMessage, !json { Output.err("\(message); still waiting") }
                lastMessage = message
            case .code:
                guard let code = s.code else { return false }
                let name = s.peer?.name.isEmpty == false ? s.peer!.name : "the other workstation"
                if shownCode != code {
                    shownCode = code
                    if json {
                        Output.out(s.json.serialized())
                    } else {
                        Output.out("Code: \(code.prefix(3)) \(code.suffix(3))   with \(name) at \(s.peerAddress ?? "?")")
                    }
                }
                guard !s.confirmedHere, confirmed != code else { return false }
                if let given = command.code {
                    confirmed = code
                    _ = try await command.options.client.confirmPairing(code: given)
                    if !json { Output.out("confirmed here; waiting for \(name)") }
                } else if isatty(0) == 1 {
                    confirmed = code
                    FileHandle.prompt("Does \(name) show \(code.prefix(3)) \(code.suffix(3)) too? [y/N] ")
                    guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
                        _ = try? await command.options.client.cancelPairing()
                        throw CommandFailure(description: "not confirmed: pairing stopped")
                    }
                    _ = try await command.options.client.confirmPairing(code: code)
                    if !json { Output.out("confirmed here; waiting for \(name)") }
                } else if !json {
                    confirmed = code
                    Output.out("Confirm on this workstation, once \(name) shows the same code: handoffctl pair --code \(code)")
                }
            case .waiting, .exchanging:
                break
            }
            return false
        }
    }
}

private enum FileHandle {
    static func prompt(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress, $0.count) }
    }
}
