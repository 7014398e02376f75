import HandoffControlAPI
import HandoffCore
import Testing

/// `POST /v1/history/forget`'s body: identifiers or all, never both or neither; every
/// identifier checked; the field named in the error.
struct ForgetSavedRequestTests {
    func body(_ text: String) throws -> JSONObject { try #require(try JSONValue(parsing: Array(text.utf8)).objectValue) }

    @Test func identifiersOrAll() throws {
        #expect(try ForgetSavedRequest(body: body(#"{"persistentIdentifiers": ["note/42"]}"#)).persistentIdentifiers == ["note/42"])
        #expect(try ForgetSavedRequest(body: body(#"{"all": true}"#)).persistentIdentifiers == nil)
        let r = ForgetSavedRequest(persistentIdentifiers: ["a"])
        #expect(try ForgetSavedRequest(body: try #require(r.json.objectValue)) == r)
    }

    @Test(arguments: [
        #"{}"#, #"{"all": false}"#, #"{"all": true, "persistentIdentifiers": ["a"]}"#, #"{"persistentIdentifiers": []}"#,
        #"{"persistentIdentifiers": [""]}"#, #"{"persistentIdentifiers": ["a\u0007"]}"#, #"{"persistentIdentifiers": [1]}"#,
        #"{"persistentIdentifiers": ["a"], "extra": 1}"#,
    ])
    func badBodiesAreRefused(_ text: String) throws {
        let o = try body(text)
        #expect(throws: ValidationError.self) { try ForgetSavedRequest(body: o) }
    }
}
