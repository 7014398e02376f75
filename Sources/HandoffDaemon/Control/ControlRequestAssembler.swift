import NIOHTTP1

/// Puts control requests together from the parts NIO's HTTP decoder gives, as the control
/// server answers them: a head, its body (at most `maximumBodyBytes`, checked against
/// `Content-Length` first and then as it arrives), its end. No I/O, so that the fuzzer
/// gives it the decoder's parts for any bytes on the socket (`fuzz-local-input`).
struct ControlRequestAssembler {
    enum Outcome {
        /// More parts are needed (parts before a head are skipped).
        case incomplete
        case request(ControlRequest, keepAlive: Bool)
        /// Answer `413` and close: the body is, or says it is, too large.
        case tooLarge
        /// A head inside a request (the decoder never does this): a broken client; close.
        case broken
    }

    let maximumBodyBytes: Int
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    mutating func add(_ part: HTTPServerRequestPart) -> Outcome {
        switch part {
        case .head(let h):
            guard head == nil else { return .broken }
            if let length = h.headers.first(name: "Content-Length").flatMap(Int.init), length > maximumBodyBytes { return .tooLarge }
            head = h
            body = []
            return .incomplete
        case .body(let buffer):
            guard head != nil else { return .incomplete }
            guard body.count + buffer.readableBytes <= maximumBodyBytes else { return .tooLarge }
            body += buffer.readableBytesView
            return .incomplete
        case .end:
            guard let h = head else { return .incomplete }
            head = nil
            defer { body = [] }
            return .request(ControlRequest(head: h, body: body), keepAlive: h.isKeepAlive)
        }
    }
}
