import Glibc
import Testing
@testable import HandoffDaemon

/// Which pages count as mapped (pagemap's present bit), and how runs are joined.
@Suite("Resident code")
struct ResidentCodeTests {
    @Test func mappedPagesMakeRunsAndNearGapsJoin() throws {
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let count = 64
        let raw = mmap(nil, Int(page) * count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        let base = try #require(raw == MAP_FAILED ? nil : raw)
        defer { munmap(base, Int(page) * count) }
        for i in [0, 1, 2, 10, 40] { base.storeBytes(of: 1, toByteOffset: i * Int(page), as: UInt8.self) }
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        try #require(pagemap >= 0)
        defer { close(pagemap) }
        let start = UInt(bitPattern: base)
        let end = start + page * UInt(count)
        let exact = ResidentCode.mappedRuns(pagemap: pagemap, start: start, end: end, page: page, joinGap: 0)
        #expect(exact.map { [($0.0 - start) / page, ($0.1 - start) / page] } == [[0, 3], [10, 11], [40, 41]])
        let joined = ResidentCode.mappedRuns(pagemap: pagemap, start: start, end: end, page: page, joinGap: 16)
        #expect(joined.map { [($0.0 - start) / page, ($0.1 - start) / page] } == [[0, 11], [40, 41]])
    }
}
