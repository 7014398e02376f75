import Foundation

/// Runs a built executable (handoffctl) as a user would and collects what it printed.
struct CommandResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
}

enum CommandLineTool {
    static func run(_ executable: String, _ arguments: [String], environment: [String: String],
                    stdin: String? = nil) async throws -> CommandResult {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.environment = environment
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        let input = Pipe()
        p.standardInput = input
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        // Read before waiting so a full pipe cannot deadlock the child.
        async let o = Task.detached { out.fileHandleForReading.readDataToEndOfFile() }.value
        async let e = Task.detached { err.fileHandleForReading.readDataToEndOfFile() }.value
        let (od, ed) = await (o, e)
        await p.exit()
        return CommandResult(status: p.terminationStatus, stdout: String(decoding: od, as: UTF8.self),
                             stderr: String(decoding: ed, as: UTF8.self))
    }

    static func handoffctl(_ arguments: [String], daemon: DaemonProcess, stdin: String? = nil) async throws -> CommandResult {
        try await run(try TestEnvironment.binary("handoffctl"), arguments, environment: daemon.environment, stdin: stdin)
    }
}
