import Foundation
import HandoffClient
import HandoffCore
import HandoffSystem
import HandoffTestSupport
import Testing

/// Another local user posing as handoffd (Docs/Security.md, limit 9): the socket's folder
/// taken first (as `/tmp/handoff-UID` can be), or a socket of theirs at the path. handoffd
/// refuses to serve from a folder it does not alone control, and clients (handoffctl, the
/// client library) send nothing to a socket another user serves. Root only: the other user
/// is `nobody`.
@Suite(.serialized, .enabled(if: getuid() == 0, "needs root to act as another user"))
struct ForeignSocketTests {
    static let nobody: UInt32 = 65534

    /// A server that listens as `nobody` at `path`, serves `clients` connections one after
    /// the other and then writes how many bytes it was sent, in all, to `path + ".got"`.
    static let fakeServer = #"""
        import os, socket, sys
        path = sys.argv[1]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        os.chmod(path, 0o666)
        os.setgid(65534); os.setuid(65534)   # listen() records who serves: nobody
        s.listen(8)
        print("ready", flush=True)
        got = 0
        for n in range(int(sys.argv[2])):
            c, _ = s.accept()
            c.settimeout(3)
            try:
                while True:
                    b = c.recv(4096)
                    if not b: break
                    got += len(b)
            except socket.timeout:
                pass
            c.close()
        try:
            open(path + ".got", "w").write(str(got))
        except OSError:
            pass
        """#

    func startFakeServer(at path: String, clients: Int = 1) async throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", Self.fakeServer, path, String(clients)]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard line.hasPrefix("ready") else { throw TestFailure("the fake server did not start: \(line)") }
        return p
    }

    @Test func clientsSendNothingToASocketAnotherUserServes() async throws {
        let dir = try TestEnvironment.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o777)  // nobody writes what it got there
        let path = dir + "/handoffd.sock"
        let server = try await startFakeServer(at: path, clients: 2)
        defer { server.terminate() }
        let ctl = try await CommandLineTool.run(try TestEnvironment.binary("handoffctl"), ["--socket", path, "become-current", "--type", "org.example.secret"],
                                                environment: ProcessInfo.processInfo.environment)
        #expect(ctl.status == 1 && ctl.stderr.contains("served by another user (uid \(Self.nobody))"), "\(ctl)")
        #expect(!ctl.stderr.contains("is not running"), "\(ctl)")
        // The client library says the same, as an error of its own.
        do {
            _ = try await HandoffClient(socketPath: path).status()
            Issue.record("the client talked to another user's server")
        } catch HandoffClientError.foreignServer(let socketPath, let uid) {
            #expect(socketPath == path && uid == Self.nobody)
        }
        try await eventually("the fake server to count what it got") { FileManager.default.fileExists(atPath: path + ".got") }
        #expect(try String(contentsOfFile: path + ".got", encoding: .utf8) == "0", "bytes reached the fake server")
    }

    @Test func handoffdRefusesASocketFolderItDoesNotAloneControl() async throws {
        for (owner, mode, expected) in [(Self.nobody, 0o700 as mode_t, "belongs to another user (uid \(Self.nobody))"),
                                        (getuid(), 0o777 as mode_t, "is writable by others")] {
            let daemon = try DaemonProcess()
            let folder = daemon.directory + "/run/handoff"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            #expect(chown(folder, owner, owner) == 0 && chmod(folder, mode) == 0)
            try await daemon.start(waitUntilReady: false)
            try await eventually("handoffd to refuse") { daemon.process?.isRunning == false }
            #expect(daemon.process?.terminationStatus != 0)
            #expect(daemon.log().contains(expected), "\(daemon.log())")
            #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        }
    }

    /// A sticky folder of root's, such as `/tmp`: no one else may remove or rename the
    /// socket there, so handoffd serves from it.
    @Test func aStickyFolderLikeTmpIsFine() async throws {
        let daemon = try DaemonProcess(arguments: [])
        let folder = daemon.directory + "/run/handoff"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        #expect(chown(folder, 0, 0) == 0 && chmod(folder, 0o1777) == 0)
        try await daemon.start()
        defer { Task { await daemon.stop() } }
        #expect(try await HandoffClient(socketPath: daemon.socketPath).status().deviceName == "test-device")
    }

    @Test func handoffdDoesNotMistakeAnotherUsersServerForItself() async throws {
        let daemon = try DaemonProcess()
        let folder = daemon.directory + "/run/handoff"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o711)  // nobody may reach the socket, not list or change the folder
        let server = try await startFakeServer(at: daemon.socketPath)
        defer { server.terminate() }
        chmod(folder, 0o700)
        try await daemon.start(waitUntilReady: false)
        try await eventually("handoffd to refuse") { daemon.process?.isRunning == false }
        #expect(daemon.log().contains("is served by another user (uid \(Self.nobody))"), "\(daemon.log())")
        #expect(!daemon.log().contains("already running"), "\(daemon.log())")
    }
    /// Another user who reaches the descriptor socket (its mode is 0600; here it is opened
    /// to all, as a mistake would) is still refused: handoffd asks the kernel who
    /// connected (`SO_PEERCRED`) before it takes any descriptor.
    @Test func theDescriptorSocketRefusesAnotherUser() async throws {
        let daemon = try await DaemonProcess().start()
        defer { Task { await daemon.stop() } }
        let path = DescriptorPassing.socketPath(besideControlSocket: daemon.socketPath)
        // Every folder on the way reachable, the socket writable by all.
        var dir = (path as NSString).deletingLastPathComponent
        while dir.count > 1 { chmod(dir, 0o711); dir = (dir as NSString).deletingLastPathComponent }
        chmod(path, 0o666)
        let script = #"""
            import json, os, socket, sys
            r, w = os.pipe()
            os.setgid(65534); os.setuid(65534)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            # The refusal comes before handoffd reads anything: read it first (a message
            # sent to a socket closed unread would reset the connection).
            got = b""
            while True:
                b = s.recv(4096)
                if not b: break
                got += b
            try:
                socket.send_fds(s, [json.dumps({"streamID": "x"}).encode()], [r, w])
                print("sent")
            except OSError:
                pass
            print(got.decode())
            """#
        let r = try await CommandLineTool.run("/usr/bin/python3", ["-c", script, path], environment: daemon.environment)
        #expect(r.status == 0 && r.stdout.contains("forbidden") && r.stdout.contains("only handoffd's own user"), "\(r)")
        #expect(!r.stdout.contains("sent"), "the connection is closed before any descriptor could go: \(r)")
        // And the daemon still serves its own user.
        #expect(try await HandoffClient(socketPath: daemon.socketPath).status().deviceName == "test-device")
    }
}
