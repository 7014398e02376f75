import ArgumentParser
import HandoffClient

/// Options every command takes.
struct ClientOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The control socket (default: $HANDOFF_SOCKET, else $XDG_RUNTIME_DIR/handoff/handoffd.sock).", valueName: "path"))
    var socket: String?

    @Flag(name: .long, help: "Print JSON instead of text for people.")
    var json = false

    /// One process, a call or two: each call blocks instead of starting NIO's threads.
    var client: HandoffClient { HandoffClient(socketPath: socket, blocking: true) }
}
