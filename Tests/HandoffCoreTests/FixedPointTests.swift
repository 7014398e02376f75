import HandoffCore
import Testing

@Suite("Fixed-point text")
struct FixedPointTests {
    @Test func asPrintfWritesIt() {
        #expect(12.0.fixedPoint(digits: 0) == "12")
        #expect(0.25.fixedPoint(digits: 1) == "0.3")
        #expect(2.5.fixedPoint(digits: 0) == "3", "halves away from zero")
        #expect((-2.5).fixedPoint(digits: 0) == "-3")
        #expect(1.05.fixedPoint(digits: 3) == "1.050")
        #expect(0.04.fixedPoint(digits: 1) == "0.0")
        #expect((-0.04).fixedPoint(digits: 1) == "0.0", "never -0.0")
        #expect(3600.123.fixedPoint(digits: 1) == "3600.1")
        #expect(Double.infinity.fixedPoint(digits: 1) == "inf")
    }
}
