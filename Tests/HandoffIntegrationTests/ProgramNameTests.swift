import Foundation
import Testing

/// Five programs in four files: handoff-browser-host is handoff-session started by that
/// name (a link, as the package installs it). Each program answers as itself, with its own
/// help and exit codes; the shared file refuses a name that is none of its programs.
@Suite struct ProgramNameTests {
    let env = ProcessInfo.processInfo.environment

    func run(_ path: String, _ args: [String]) async throws -> CommandResult {
        try await CommandLineTool.run(path, args, environment: env)
    }

    @Test func eachProgramAnswersToItsName() async throws {
        let ctl = try await run(try TestEnvironment.binary("handoffctl"), ["--help"])
        #expect(ctl.status == 0 && ctl.stdout.contains("USAGE: handoffctl"), "\(ctl)")
        let daemon = try await run(try TestEnvironment.binary("handoffd"), ["--help"])
        #expect(daemon.status == 0 && daemon.stdout.contains("handoffd"), "\(daemon)")
        let session = try await run(try TestEnvironment.binary("handoff-session"), ["--help"])
        #expect(session.status == 0 && session.stdout.contains("USAGE: handoff-session"), "\(session)")
        // The helpers say how they are meant to be started, with their own exit codes.
        let history = try await run(try TestEnvironment.binary("handoff-history"), [])
        #expect(history.status == 2 && history.stderr.contains("usage: handoff-history --directory"), "\(history)")
        let host = try await run(try TestEnvironment.binary("handoff-browser-host"), ["--manifest", "lynx"])
        #expect(host.status == 1 && host.stderr.contains("usage: handoff-browser-host --manifest"), "\(host)")
        #expect(!host.stdout.contains("handoff-session"), "\(host)")
        // A usage error is still handoffctl's own exit code and message.
        let bad = try await run(try TestEnvironment.binary("handoffctl"), ["frobnicate"])
        #expect(bad.status == 2 && bad.stderr.contains("handoffctl"), "\(bad)")
    }

    @Test func theSharedFileRefusesANameThatIsNoneOfItsPrograms() async throws {
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["handoff-frobnicate", "handoff", "HANDOFF-SESSION"] {
            #expect(symlink(try TestEnvironment.binary("handoff-session"), dir + "/" + name) == 0)
            let r = try await run(dir + "/" + name, ["--help"])
            #expect(r.status == 127, "\(name): \(r)")
            #expect(r.stderr.contains("started as '\(name)', which is none of its programs (handoff-session, handoff-browser-host)"), "\(name): \(r)")
            #expect(r.stdout.isEmpty, "\(name): \(r)")
        }
    }
}
