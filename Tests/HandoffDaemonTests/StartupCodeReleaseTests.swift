@testable import HandoffDaemon
import Testing

/// Which mappings handoffd hands back after start-up: the clean read-only ones of files.
@Suite("Start-up code release")
struct StartupCodeReleaseTests {
    @Test func onlyCleanReadOnlyFileMappings() {
        let smaps = """
            5581a0000000-5581a0400000 r--p 00000000 fd:01 1234                       /usr/bin/handoffd
            Size:               4096 kB
            Rss:                1024 kB
            Anonymous:             0 kB
            VmFlags: rd mr mw me sd
            5581a0400000-5581a4000000 r-xp 00400000 fd:01 1234                       /usr/bin/handoffd
            Rss:                9000 kB
            Anonymous:             0 kB
            VmFlags: rd ex mr mw me sd
            5581a4000000-5581a4100000 r--p 04000000 fd:01 1234                       /usr/bin/handoffd
            Rss:                 780 kB
            Anonymous:           780 kB
            VmFlags: rd mr mw me ac sd
            5581a4100000-5581a4200000 rw-p 04100000 fd:01 1234                       /usr/bin/handoffd
            Anonymous:           212 kB
            5581a4200000-5581a4300000 rw-p 00000000 00:00 0                          [heap]
            Anonymous:          1024 kB
            7f0000000000-7f0000001000 r--s 00000000 00:05 77                         /memfd:x (deleted)
            Anonymous:             0 kB
            7f0000010000-7f0000020000 r-xp 00000000 00:00 0                          [vdso]
            Anonymous:             0 kB
            7f0000020000-7f0000030000 r-xp 00000000 fd:01 99                         /usr/lib/x86_64-linux-gnu/libc.so.6
            Anonymous:             0 kB
            """
        let ranges = StartupCodeRelease.cleanReadOnlyFileMappings(smaps)
        #expect(ranges.map(\.start) == [0x5581a0000000, 0x5581a0400000, 0x7f0000020000])
        #expect(ranges.map(\.end) == [0x5581a0400000, 0x5581a4000000, 0x7f0000030000])
    }
}
