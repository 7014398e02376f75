import ArgumentParser

/// `handoffctl shell-integration SHELL`: the lines a shell's startup file evaluates so that
/// the shell is offered as a terminal (`offer-terminal`) whenever its directory changes.
/// The prompt itself only compares the directory with the last one offered; the offer
/// runs in the background, detached, so a slow or stopped handoffd never holds a prompt.
struct ShellIntegrationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell-integration", abstract: "Print the lines that offer this shell as a terminal when its directory changes.",
        discussion: """
            Add to ~/.bashrc: eval "$(handoffctl shell-integration bash)"; to ~/.zshrc: \
            eval "$(handoffctl shell-integration zsh)"; to ~/.config/fish/config.fish: \
            handoffctl shell-integration fish | source
            """)

    enum Shell: String, ExpressibleByArgument, CaseIterable { case bash, zsh, fish }

    @Argument(help: "bash, zsh or fish.")
    var shell: Shell

    func run() throws {
        Output.out(Self.script(for: shell))
    }

    static func script(for shell: Shell) -> String {
        switch shell {
        case .bash:
            return #"""
                # handoff: offer this shell to your other workstations when its directory changes.
                __handoff_terminal_last=
                __handoff_terminal() {
                    [[ $PWD == "$__handoff_terminal_last" ]] && return
                    __handoff_terminal_last=$PWD
                    # One fork, not waited for; no job notice now, and no "Done" later.
                    { command handoffctl offer-terminal --quiet --shell "${HOSTNAME:-host}:$$" </dev/null >/dev/null 2>&1 & } 2>/dev/null
                    disown $! 2>/dev/null
                }
                if [[ ";${PROMPT_COMMAND[*]:-};" != *";__handoff_terminal;"* ]]; then
                    if (( BASH_VERSINFO[0] > 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] >= 1) )); then
                        PROMPT_COMMAND=(__handoff_terminal "${PROMPT_COMMAND[@]}")
                    else
                        PROMPT_COMMAND="__handoff_terminal${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
                    fi
                fi
                """#
        case .zsh:
            return #"""
                # handoff: offer this shell to your other workstations when its directory changes.
                typeset -g __handoff_terminal_last=
                __handoff_terminal() {
                    [[ $PWD == "$__handoff_terminal_last" ]] && return
                    __handoff_terminal_last=$PWD
                    # &!: in the background and disowned at once (one fork, no job notice).
                    command handoffctl offer-terminal --quiet --shell "${HOST:-host}:$$" </dev/null >/dev/null 2>&1 &!
                }
                autoload -Uz add-zsh-hook
                add-zsh-hook precmd __handoff_terminal
                """#
        case .fish:
            return #"""
                # handoff: offer this shell to your other workstations when its directory changes.
                function __handoff_terminal --on-variable PWD
                    # Without handoffctl (not installed, not on PATH yet), fish would print
                    # "Unknown command" at every cd.
                    command -q handoffctl; or return 0
                    command handoffctl offer-terminal --quiet --shell (hostname):$fish_pid </dev/null >/dev/null 2>&1 &
                    disown 2>/dev/null
                end
                __handoff_terminal
                """#
        }
    }
}
