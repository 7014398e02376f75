import ArgumentParser
import Glibc

// A closed pipe is an error to report, not a reason to die.
signal(SIGPIPE, SIG_IGN)
do {
    let command = try SessionCommand.parse()
    try await command.run()
} catch {
    SessionCommand.exit(withError: error)
}
