import NIOCore
import NIOSSL
import Testing
@testable import HandoffDaemon
#if canImport(Glibc)
import Glibc
#endif

/// A dial's failure is classified by the error's type, never by its text.
@Suite("Dial failure")
struct DialFailureTests {
    @Test func errorsAreClassifiedByType() {
        #expect(DialFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .refused)
        #expect(DialFailure(IOError(errnoCode: EHOSTUNREACH, reason: "connect")) == .unreachable(String(cString: strerror(EHOSTUNREACH))))
        #expect(DialFailure(ChannelError.connectTimeout(.seconds(3))) == .noAnswer)
        #expect(DialFailure(NIOSSLError.handshakeFailed(.syscallError)) == .tlsFailed)
        #expect(DialFailure(DialFailure.refused) == .refused)
        // Text that merely looks like a timeout or a refusal is not one.
        struct Odd: Error, CustomStringConvertible { var description: String { "the request was refused; connectTimeout" } }
        #expect(DialFailure(Odd()) == .other("the request was refused; connectTimeout"))
    }

    @Test func eachSaysWhatToDo() {
        #expect(DialFailure.refused.description.contains("is handoffd running there?"))
        #expect(DialFailure.tlsFailed.description.contains("pair them again"))
        #expect(DialFailure.tlsFailed.description.contains("handoffctl pair --new-identity"), "the way back of a removed workstation")
        #expect(DialFailure.noAnswer.description.contains("firewall"))
    }
}
