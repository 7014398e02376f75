// swift-tools-version: 6.1
import PackageDescription

// Layers, dependencies pointing toward the model:
//   HandoffCore (the activity and its values; no I/O)
//     <-  HandoffSystem (XDG paths, bounded reads, whole writes)
//     <-  HandoffControlAPI (the local API's messages)     <-  HandoffClient  <-  HandoffCommands (handoffctl)
//     <-  HandoffStreamFrames (continuation-stream frames)                    <-  HandoffDesktop   <-  SessionProgram
//     <-  HandoffPeerProtocol (messages between workstations; uses HandoffStreamFrames)
//     <-  HandoffHistoryProtocol (handoffd <-> its history helper; carries HandoffControlAPI's
//                                 HistoryEntry)  <-  HandoffHistory  <-  HistoryProgram
//     <-  HandoffKDEConnect (the KDE Connect protocol's packets, identities and pairing)
//   all of them  <-  HandoffDaemon  <-  HandoffdProgram
// On top, four executables, each a thin main over its program's module: handoffd,
// handoffctl, handoff-history, and handoff-session, which is also handoff-browser-host
// when started by that name. handoffctl never links the daemon; only the session agent's
// file links GIO.

// The one version of the software: `--version`, `/v1/status` and the Debian package say it.
// HANDOFF_VERSION overrides it for a build (scripts/package --version, for the upgrade test);
// only the C file that holds it is compiled again.
let version = Context.environment["HANDOFF_VERSION"] ?? "0.1.0"

// Every executable binds its few shared-library symbols at start and gets a read-only GOT
// (full RELRO), as Debian builds its packages (lintian: hardening-no-bindnow).
let bindNow: LinkerSetting = .unsafeFlags(["-Xlinker", "-z", "-Xlinker", "relro", "-Xlinker", "-z", "-Xlinker", "now"], .when(platforms: [.linux]))

let package = Package(
    name: "handoff",
    platforms: [.macOS(.v14)],
    products: [
        // Four files for five programs: handoff-browser-host is handoff-session started by
        // that name (a link; scripts/swift-env's `link_programs` makes it next to a build).
        // Each file links only the libraries its programs need (Docs/Packaging.md, "One
        // executable?").
        .executable(name: "handoffd", targets: ["handoffd"]),
        .executable(name: "handoffctl", targets: ["handoffctl"]),
        .executable(name: "handoff-session", targets: ["handoff-session"]),
        .executable(name: "handoff-history", targets: ["handoff-history"]),
        .library(name: "HandoffClient", targets: ["HandoffClient"]),
        .library(name: "HandoffCore", targets: ["HandoffCore"]),
        // For the fuzz targets (scripts/dev/fuzz) and other tools that speak the protocols.
        .library(name: "HandoffControlAPI", targets: ["HandoffControlAPI"]),
        .library(name: "HandoffPeerProtocol", targets: ["HandoffPeerProtocol"]),
        .library(name: "HandoffStreamFrames", targets: ["HandoffStreamFrames"]),
        .library(name: "HandoffHistoryProtocol", targets: ["HandoffHistoryProtocol"]),
        .library(name: "HandoffKDEConnect", targets: ["HandoffKDEConnect"]),
        .library(name: "HandoffDaemon", targets: ["HandoffDaemon"]),
        .library(name: "HandoffDesktop", targets: ["HandoffDesktop"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    ],
    targets: [
        // The activity model: values, validation, JSON and binary encodings. No I/O.
        .target(name: "HandoffCore"),
        // The operating system's small services the programs share: XDG paths, reading a file
        // with a cap, writing all of a buffer, recognising /dev/null.
        .target(
            name: "HandoffSystem",
            dependencies: ["CHandoffSystem", .product(name: "NIOCore", package: "swift-nio")]),
        // The local API's messages (Docs/LocalAPI.md): requests' and responses' JSON, events,
        // errors, route paths. Shared by handoffd, its clients and the session agent.
        .target(
            name: "HandoffControlAPI",
            dependencies: ["HandoffCore", "CHandoffVersion"]),
        // Continuation-stream frames and their codec: one format on the control socket (app to
        // daemon) and between daemons, so a daemon relays frames without re-encoding them.
        .target(
            name: "HandoffStreamFrames",
            dependencies: ["HandoffCore", .product(name: "NIOCore", package: "swift-nio")]),
        // What travels between workstations (Docs/PeerProtocol.md): the hello, messages, framing.
        .target(
            name: "HandoffPeerProtocol",
            dependencies: ["HandoffCore", "HandoffStreamFrames", .product(name: "NIOCore", package: "swift-nio")]),
        // What handoffd and its history helper say to each other (one JSON object a line).
        .target(
            name: "HandoffHistoryProtocol",
            dependencies: ["HandoffCore", "HandoffControlAPI"]),
        // The version string above, compiled in (a C string: Swift has no valued defines).
        .target(name: "CHandoffVersion", cSettings: [.define("HANDOFF_VERSION", to: "\"\(version)\"")]),
        // Small C shim for what Swift's Glibc does not expose (struct ucred, SCM_RIGHTS).
        .target(name: "CHandoffSystem"),
        // Avahi's C client, imported by HandoffAvahi alone.
        .systemLibrary(
            name: "CAvahi", pkgConfig: "avahi-client",
            providers: [.apt(["libavahi-client-dev"])]),
        // GIO (launching desktop entries, D-Bus), imported by HandoffDesktop alone.
        .systemLibrary(
            name: "CGIO", pkgConfig: "gio-unix-2.0",
            providers: [.apt(["libglib2.0-dev"])]),
        // XCB with XFixes (the X11 clipboard), imported by HandoffDesktop alone.
        .systemLibrary(
            name: "CXCB", pkgConfig: "xcb-xfixes",
            providers: [.apt(["libxcb1-dev", "libxcb-xfixes0-dev"])]),
        // Wayland's data-control protocol (the clipboard on wlroots compositors and KWin):
        // its generated glue (scripts/dev/wayland-protocols) over libwayland-client.
        .target(
            name: "CWaylandDataControl",
            exclude: ["protocol"],
            linkerSettings: [.linkedLibrary("wayland-client")]),
        // The desktop side of continuing, for the session agent: which app handles what,
        // launching, notifications. Never linked by handoffd.
        .target(
            name: "HandoffDesktop",
            dependencies: ["CGIO", "CXCB", "CWaylandDataControl", "HandoffCore", "HandoffSystem", "HandoffControlAPI", "HandoffClient",
                           .product(name: "Crypto", package: "swift-crypto"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "Logging", package: "swift-log")]),
        // The KDE Connect protocol (Docs/KDEConnect.md): packets, identities, the verification
        // key and pairing, as values. No I/O.
        .target(
            name: "HandoffKDEConnect",
            dependencies: ["HandoffCore", .product(name: "Crypto", package: "swift-crypto"), .product(name: "X509", package: "swift-certificates"),
                           .product(name: "SwiftASN1", package: "swift-asn1")]),
        // Log lines as journald reads them (`<N>` priorities): handoffd's and its KDE Connect endpoint's.
        .target(name: "HandoffJournal", dependencies: [.product(name: "Logging", package: "swift-log")]),
        // DNS-SD advertisement and discovery through avahi-daemon.
        .target(
            name: "HandoffAvahi",
            dependencies: ["CAvahi", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "HandoffDaemon",
            dependencies: [
                "HandoffCore", "HandoffSystem", "HandoffControlAPI", "HandoffStreamFrames", "HandoffPeerProtocol",
                "HandoffHistoryProtocol", "CHandoffSystem", "HandoffAvahi", "HandoffKDEConnect", "HandoffJournal",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "HandoffClient",
            dependencies: [
                "HandoffCore", "HandoffSystem", "HandoffControlAPI", "HandoffStreamFrames",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .target(
            name: "HandoffCommands",
            dependencies: [
                "HandoffClient", "HandoffCore", "HandoffSystem", "HandoffControlAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Each program's entry, a library the one executable calls by name.
        .target(
            name: "HandoffdProgram",
            dependencies: [
                "HandoffDaemon", "HandoffCore", "HandoffSystem", "HandoffControlAPI", "HandoffJournal",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The activity history's store (SQLite through GRDB), in a helper process that
        // handoffd starts when the history is needed: GRDB brings full Foundation and ICU,
        // which the always-running daemon does not load.
        .target(
            name: "HandoffHistory",
            dependencies: ["HandoffCore", "HandoffControlAPI", "HandoffHistoryProtocol",
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "HistoryProgram",
            dependencies: ["HandoffHistory", "HandoffCore", "HandoffHistoryProtocol", .product(name: "Logging", package: "swift-log")]),
        // The KDE Connect endpoint (Docs/KDEConnect.md): handoffd's file started by another
        // name, a client of the local API like any app.
        .target(
            name: "KDEConnectProgram",
            dependencies: [
                "HandoffKDEConnect", "HandoffClient", "HandoffCore", "HandoffSystem", "HandoffControlAPI", "HandoffJournal", "HandoffAvahi",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "BrowserHostProgram",
            dependencies: [
                "HandoffDesktop", "HandoffClient", "HandoffCore", "HandoffSystem",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),
        .target(
            name: "SessionProgram",
            dependencies: [
                "HandoffDesktop", "HandoffClient", "HandoffCore", "HandoffSystem", "HandoffControlAPI",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // `--static-swift-stdlib` links with -export-dynamic: every symbol of the executable
        // (32,000 in handoffd) goes into its dynamic symbol table. Nothing looks them up, but
        // the Swift runtime's start-up (dladdr, to find its own path) reads the whole table,
        // which stays resident, and the loader's symbol lookups search it first
        // (Docs/Performance.md, "Idle memory", "Quicker CLI"). A no-op without the static
        // runtime.
        .executableTarget(name: "handoffd", dependencies: ["HandoffdProgram", "KDEConnectProgram", "HandoffSystem"],
                          linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux])), bindNow]),
        .executableTarget(name: "handoffctl", dependencies: ["HandoffCommands", "HandoffSystem"],
                          linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux])), bindNow]),
        .executableTarget(name: "handoff-history", dependencies: ["HistoryProgram", "CHandoffSystem"], linkerSettings: [bindNow]),
        .executableTarget(name: "handoff-session", dependencies: ["SessionProgram", "BrowserHostProgram", "HandoffSystem"],
                          linkerSettings: [bindNow]),
        // What the tests share: waiting on facts (`eventually`, `never`), and TestFailure.
        .target(name: "HandoffTestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "HandoffCoreTests",
            dependencies: ["HandoffCore", "HandoffSystem", "HandoffControlAPI", "HandoffStreamFrames", "HandoffPeerProtocol",
                           "HandoffHistoryProtocol", .product(name: "NIOEmbedded", package: "swift-nio")]),
        .testTarget(
            name: "HandoffDaemonTests",
            dependencies: ["HandoffDaemon", "HandoffTestSupport", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")]),
        .testTarget(name: "HandoffHistoryTests", dependencies: ["HandoffHistory", "HandoffCore", "HandoffControlAPI", "HandoffHistoryProtocol",
                                                               .product(name: "Logging", package: "swift-log"),
                                                               // To make a database as an earlier version left it.
                                                               .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "HandoffDesktopTests", dependencies: ["HandoffDesktop", "HandoffCore", "HandoffControlAPI"]),
        .testTarget(name: "HandoffKDEConnectTests", dependencies: ["HandoffKDEConnect", "KDEConnectProgram", "HandoffCore", "HandoffSystem",
                                                                  .product(name: "Crypto", package: "swift-crypto"),
                                                                  .product(name: "X509", package: "swift-certificates"),
                                                                  .product(name: "NIOEmbedded", package: "swift-nio"),
                                                                  .product(name: "Logging", package: "swift-log")]),
        // Every fuzz target's body (Tests/Fuzz/FuzzBodies, shared with scripts/dev/fuzz's libFuzzer
        // build) over its committed corpus and mutations of it, in the suite's own build.
        .testTarget(
            name: "HandoffFuzzCorpusTests",
            dependencies: ["HandoffCore", "HandoffControlAPI", "HandoffStreamFrames", "HandoffPeerProtocol", "HandoffHistoryProtocol",
                           "HandoffDaemon", "HandoffDesktop", "HandoffKDEConnect",
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/Fuzz",
            // The corpora are read at run time; the libFuzzer entries are scripts/dev/fuzz's.
            exclude: ["corpus", "FuzzSupport", "fuzz-json", "fuzz-plist", "fuzz-peer-message", "fuzz-frames", "fuzz-account",
                      "fuzz-kept", "fuzz-local-input", "fuzz-pairing", "fuzz-kdeconnect"],
            sources: ["FuzzBodies", "CorpusTests"]),
        .testTarget(
            name: "HandoffIntegrationTests",
            dependencies: ["HandoffCore", "HandoffControlAPI", "HandoffStreamFrames", "HandoffClient", "HandoffSystem", "HandoffTestSupport",
                           .product(name: "NIOCore", package: "swift-nio")]
        ),
    ]
)
