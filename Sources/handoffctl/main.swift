import HandoffCommands

await Handoffctl.runAndExit()
