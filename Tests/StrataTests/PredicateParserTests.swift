import Foundation
import Testing
@testable import Strata

@Suite("FetchPredicate format parser")
struct PredicateParserTests {
    private func comparison(_ format: String, _ arguments: any PredicateArgument...) throws -> PredicateComparison {
        let p = try FetchPredicate(format: format, arguments: arguments)
        guard case .comparison(let c) = p.expression else {
            Issue.record("'\(format)' is not a single comparison: \(p.expression)")
            throw FetchPredicateError(.syntax, "not a comparison")
        }
        return c
    }

    private func parseError(_ format: String, _ arguments: any PredicateArgument...) -> FetchPredicateError? {
        do {
            let p = try FetchPredicate(format: format, arguments: arguments)
            Issue.record("'\(format)' parsed as \(p)")
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Operators and options

    @Test("Operators", arguments: [
        ("==", PredicateOperator.equalTo), ("=", .equalTo), ("!=", .notEqualTo), ("<>", .notEqualTo),
        ("<", .lessThan), ("<=", .lessThanOrEqualTo), ("=<", .lessThanOrEqualTo), (">", .greaterThan),
        (">=", .greaterThanOrEqualTo), ("=>", .greaterThanOrEqualTo), ("BEGINSWITH", .beginsWith),
        ("beginswith", .beginsWith), ("ENDSWITH", .endsWith), ("CONTAINS", .contains), ("LIKE", .like),
        ("MATCHES", .matches), ("Like", .like),
    ] as [(String, PredicateOperator)])
    func operators(_ symbol: String, _ op: PredicateOperator) throws {
        let c = try comparison("name \(symbol) 'x'")
        #expect(c.operator == op)
        #expect(c.left == .keyPath("name"))
        #expect(c.right == .value("x"))
        #expect(try comparison("name\(symbol.first!.isLetter ? " " : "")\(symbol)[cd] 'x'").options == [.caseInsensitive, .diacriticInsensitive])
    }

    @Test("Options", arguments: [
        ("[c]", PredicateOptions.caseInsensitive), ("[d]", .diacriticInsensitive), ("[cd]", [.caseInsensitive, .diacriticInsensitive]),
        ("[dc]", [.caseInsensitive, .diacriticInsensitive]), ("[n]", []), ("[C]", .caseInsensitive), ("", []),
    ] as [(String, PredicateOptions)])
    func options(_ suffix: String, _ options: PredicateOptions) throws {
        #expect(try comparison("name BEGINSWITH\(suffix) 'x'").options == options)
        #expect(try comparison("name ==\(suffix) 'x'").options == options)
    }

    @Test func betweenAndIn() throws {
        let between = try comparison("age BETWEEN {18, 65}")
        #expect(between.operator == .between)
        #expect(between.right == .list([.value(18), .value(65)]))
        #expect(try comparison("age BETWEEN %@", [18, 65]).right == .list([.value(18), .value(65)]))
        #expect(try comparison("name IN {'a', \"b\"}").right == .list([.value("a"), .value("b")]))
        #expect(try comparison("name IN %@", ["a", "b"]).right == .list([.value("a"), .value("b")]))
        #expect(try comparison("name IN %@", Set(["b", "a"])).right == .list([.value("a"), .value("b")]))
        #expect(try comparison("name IN {}").right == .list([]))
        #expect(try comparison("name IN %@", PredicateList([1, "two", Int?.none])).right == .list([.value(1), .value("two"), .value(nil)]))
        #expect(try comparison("'x' IN tags.name").right == .keyPath("tags.name"))
    }

    // MARK: - Literals and arguments

    @Test("Literals", arguments: [
        ("'text'", Value.string("text")), ("\"text\"", .string("text")), (#"'it\'s'"#, .string("it's")),
        (#""say \"hi\"""#, .string("say \"hi\"")), (#"'a\nb\tc'"#, .string("a\nb\tc")), (#"'\u00e9'"#, .string("é")),
        (#"'a\*b'"#, .string(#"a\*b"#)), ("'Café'", .string("Café")), ("''", .string("")),
        ("42", .int(42)), ("-7", .int(-7)), ("3.5", .double(3.5)), ("-2.5e3", .double(-2500)), ("1E2", .double(100)),
        ("0x1F", .int(31)), ("0b101", .int(5)), ("0o17", .int(15)), ("-0x10", .int(-16)),
        ("9223372036854775807", .int(Int64.max)), ("-9223372036854775808", .int(Int64.min)),
        ("nil", .null), ("NULL", .null), ("Nil", .null), ("TRUE", .bool(true)), ("yes", .bool(true)),
        ("FALSE", .bool(false)), ("NO", .bool(false)),
    ] as [(String, Value)])
    func literals(_ literal: String, _ value: Value) throws {
        #expect(try comparison("x == \(literal)").right == .value(value))
    }

    @Test func arguments() throws {
        let date = Date(timeIntervalSince1970: 1_000)
        let id = UUID()
        #expect(try comparison("x == %@", "s").right == .value("s"))
        #expect(try comparison("x == %@", date).right == .value(.date(date)))
        #expect(try comparison("x == %@", id).right == .value(.uuid(id)))
        #expect(try comparison("x == %@", Data([1, 2])).right == .value(.data(Data([1, 2]))))
        #expect(try comparison("x == %@", URL(string: "https://a.b")!).right == .value(.uri(URL(string: "https://a.b")!)))
        #expect(try comparison("x == %@", Decimal(5)).right == .value(.decimal(5)))
        #expect(try comparison("x == %@", String?.none).right == .value(.null))
        #expect(try comparison("x == %@", Value.bool(true)).right == .value(true))
        #expect(try comparison("x == %d", 5).right == .value(5))
        #expect(try comparison("x == %i", Int16(5)).right == .value(5))
        #expect(try comparison("x == %ld", Int64(5)).right == .value(5))
        #expect(try comparison("x == %lld", 5).right == .value(5))
        #expect(try comparison("x == %f", 2.5).right == .value(2.5))
        #expect(try comparison("x == %lf", 2).right == .value(2.0))
        let k = try comparison("%K == %@", "colorScheme.primary", "red")
        #expect(k.left == .keyPath("colorScheme.primary"))
        #expect(k.right == .value("red"))
        #expect(try comparison("%K.name == 1", "owner").left == .keyPath("owner.name"))
        #expect(try comparison("x == %@", ["a"]).right == .list([.value("a")]))
    }

    @Test("Argument errors", arguments: [
        ("name == %@", 0, FetchPredicateError.Code.missingArgument, 8, "no argument for %@ (argument 1)"),
        ("a == %@ AND b == %@", 1, .missingArgument, 17, "no argument for %@ (argument 2)"),
        ("name == %@", 2, .extraArgument, 10, "2 arguments given but the format uses 1"),
        ("name == 'x'", 1, .extraArgument, 11, "remove the 1 extra argument"),
        ("%K == 1", 1, .invalidArgument, 0, "%K needs a non-empty String naming a keypath, got an Integer"),
        ("x == %d", -1, .invalidArgument, 5, "%d needs an integer, got a String"),
        ("x == %f", -1, .invalidArgument, 5, "%f needs a number, got a String"),
        ("x == %s", 1, .syntax, 5, "unknown format specifier '%s'"),
    ] as [(String, Int, FetchPredicateError.Code, Int, String)])
    func argumentErrors(_ format: String, count: Int, code: FetchPredicateError.Code, position: Int, message: String) throws {
        let arguments: [any PredicateArgument] = count < 0 ? ["text"] : Array(repeating: 1, count: count)
        let e = try #require(parseError(format, arguments: arguments))
        #expect(e.code == code, "\(e)")
        #expect(e.position == position, "\(e)")
        #expect(e.reason.contains(message), "\(e)")
    }

    private func parseError(_ format: String, arguments: [any PredicateArgument]) -> FetchPredicateError? {
        do {
            let p = try FetchPredicate(format: format, arguments: arguments)
            Issue.record("'\(format)' parsed as \(p)")
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Keypaths and aggregates

    @Test("Keypaths", arguments: [
        ("name", "name"), ("colorScheme.primary", "colorScheme.primary"), ("owner.manager.name", "owner.manager.name"),
        ("tags.@count", "tags.@count"), ("items.@sum.price", "items.@sum.price"), ("SELF", "self"), ("self", "self"),
        ("SELF.name", "name"), ("#IN", "IN"), ("#from.#in", "from.in"), ("owner.first", "owner.first"), ("nämé", "nämé"),
        ("_private", "_private"),
    ] as [(String, String)])
    func keyPaths(_ written: String, _ keyPath: String) throws {
        #expect(try comparison("\(written) == 1").left == .keyPath(keyPath))
    }

    @Test("Modifiers", arguments: [
        ("ANY", PredicateModifier.any), ("any", .any), ("SOME", .any), ("ALL", .all), ("NONE", .none), ("", .direct),
    ] as [(String, PredicateModifier)])
    func modifiers(_ word: String, _ modifier: PredicateModifier) throws {
        let c = try comparison("\(word) tags.name == 'x'")
        #expect(c.modifier == modifier)
        #expect(c.left == .keyPath("tags.name"))
    }

    // MARK: - Structure

    @Test func precedence() throws {
        let a = PredicateExpression.comparison(PredicateComparison(.keyPath("a"), .equalTo, .value(1)))
        let b = PredicateExpression.comparison(PredicateComparison(.keyPath("b"), .equalTo, .value(2)))
        let c = PredicateExpression.comparison(PredicateComparison(.keyPath("c"), .equalTo, .value(3)))
        #expect(try FetchPredicate(format: "a == 1 OR b == 2 AND c == 3").expression == .or([a, .and([b, c])]))
        #expect(try FetchPredicate(format: "a == 1 AND b == 2 OR c == 3").expression == .or([.and([a, b]), c]))
        #expect(try FetchPredicate(format: "NOT a == 1 AND b == 2").expression == .and([.not(a), b]))
        #expect(try FetchPredicate(format: "NOT (a == 1 AND b == 2)").expression == .not(.and([a, b])))
        #expect(try FetchPredicate(format: "(a == 1 || b == 2) && !c == 3").expression == .and([.or([a, b]), .not(c)]))
        #expect(try FetchPredicate(format: "a == 1 and b == 2 or not c == 3").expression == .or([.and([a, b]), .not(c)]))
        #expect(try FetchPredicate(format: "NOT NOT a == 1").expression == .not(.not(a)))
        #expect(try FetchPredicate(format: "a == 1 AND b == 2 AND c == 3").expression == .and([a, b, c]))
        #expect(try FetchPredicate(format: "((a == 1))").expression == a)
        #expect(try FetchPredicate(format: "TRUEPREDICATE").expression == .constant(true))
        #expect(try FetchPredicate(format: "falsepredicate OR a == 1").expression == .or([.constant(false), a]))
    }

    @Test func equalityIgnoresSpellingAndSpacing() throws {
        let p = try FetchPredicate(format: "a==1 && b<>'x'")
        let q = try FetchPredicate(format: "  a  =  1  AND  b  !=  \"x\"  ")
        #expect(p == q)
        #expect(Set([p, q]).count == 1)
        #expect(p.description == "a == 1 AND b != \"x\"")
    }

    @Test("Descriptions", arguments: [
        ("a == 1 OR b == 2 AND c == 3", "a == 1 OR b == 2 AND c == 3"),
        ("(a == 1 OR b == 2) AND c == 3", "(a == 1 OR b == 2) AND c == 3"),
        ("NOT (a == 1 OR b == 2)", "NOT (a == 1 OR b == 2)"),
        ("!a = 1", "NOT a == 1"),
        ("ANY tags.name ==[cd] 'Café'", "ANY tags.name ==[cd] \"Café\""),
        ("x IN {1, 'two', nil, TRUE}", "x IN {1, \"two\", nil, TRUE}"),
        ("x BETWEEN {-1.5, 2}", "x BETWEEN {-1.5, 2}"),
        ("#IN == 'a\"b'", "#IN == \"a\\\"b\""),
        ("SELF == 1", "SELF == 1"),
        ("tags.@count > 0x10", "tags.@count > 16"),
        ("TRUEPREDICATE", "TRUEPREDICATE"),
    ] as [(String, String)])
    func descriptions(_ format: String, _ description: String) throws {
        let p = try FetchPredicate(format: format)
        #expect(p.description == description)
        #expect(try FetchPredicate(format: p.description) == p)
    }

    @Test func combinators() throws {
        let a = try FetchPredicate(format: "a == 1")
        let b = try FetchPredicate(format: "b == 2")
        let c = try FetchPredicate(format: "c == 3")
        #expect((a && b && c) == (try FetchPredicate(format: "a == 1 AND b == 2 AND c == 3")))
        #expect((a || b || c) == (try FetchPredicate(format: "a == 1 OR b == 2 OR c == 3")))
        #expect(!a == (try FetchPredicate(format: "NOT a == 1")))
        #expect(!(!a) == a)
        #expect(FetchPredicate.and([.true, a]) == a)
        #expect(FetchPredicate.and([a, .false]) == .false)
        #expect(FetchPredicate.or([.false, a]) == a)
        #expect(FetchPredicate.or([a, .true]) == .true)
        #expect(FetchPredicate.and([]) == .true)
        #expect(!FetchPredicate.true == .false)
        #expect((a || b).and(c).description == "(a == 1 OR b == 2) AND c == 3")
        #expect(FetchPredicate.comparison("name", .beginsWith, "x", options: .caseInsensitive) == (try FetchPredicate(format: "name BEGINSWITH[c] 'x'")))
    }

    // MARK: - Syntax errors

    @Test("Syntax errors", arguments: [
        ("name == ", 8, "expected a value after '=='"),
        ("name ==", 7, "expected a value after '=='"),
        ("name", 4, "expected an operator after 'name'"),
        ("name ~= 'x'", 5, "unexpected character '~'"),
        ("name IS 'x'", 5, "unknown operator 'IS'"),
        ("name === 'x'", 7, "expected a value after '==', found '='"),
        ("(name == 'x'", 12, "expected ')' to close the '(' at offset 0"),
        ("((a == 1) OR (b == 2)", 21, "expected ')' to close the '(' at offset 0"),
        ("name == 'x')", 11, "unexpected ')' with no matching '('"),
        ("name == 'x' name == 'y'", 12, "expected AND, OR or the end of the predicate, found 'name'"),
        ("name == 'abc", 8, "unterminated string"),
        ("name == 'x' AND", 15, "expected a predicate"),
        ("", 0, "expected a predicate"),
        ("()", 1, "expected a predicate"),
        ("name ==[x] 'a'", 8, "unknown comparison option 'x'"),
        ("name ==[c 'a'", 10, "expected ']'"),
        ("age BETWEEN 1", 12, "BETWEEN needs a list of two values"),
        ("age BETWEEN {1, 2, 3}", 12, "BETWEEN needs a list of two values"),
        ("age IN 5", 7, "IN needs a list"),
        ("x IN {1, 2", 10, "expected ',' or '}' in the list opened at offset 5"),
        ("a == 1 & b == 2", 7, "use && or AND"),
        ("a + 1 == 2", 2, "arithmetic"),
        ("AND == 1", 0, "found the keyword 'AND'; escape a keypath named 'AND' as #AND"),
        ("x == 99999999999999999999", 5, "does not fit in a 64-bit integer"),
        ("x == 12abc", 5, "'12abc' is not a valid number"),
        ("owner. == 1", 7, "expected a property name after '.'"),
        ("@count > 1", 0, "'@count' must follow a to-many keypath"),
        ("x == 'é' AND", 13, "expected a predicate"),
        ("ñame ≠ 'x'", 6, "unknown operator '≠'"),
    ] as [(String, Int, String)])
    func syntaxErrors(_ format: String, position: Int, message: String) throws {
        let e = try #require(parseError(format))
        #expect(e.code == .syntax, "\(e)")
        #expect(e.position == position, "\(e)")
        #expect(e.reason.contains(message), "\(e)")
        #expect(e.format == format)
    }

    @Test("Unsupported constructs", arguments: [
        "x == $VALUE", "SUBQUERY(items, $i, $i.x > 1).@count > 0", "FUNCTION(x, 'y') == 1", "x == CAST(1, 'NSDate')",
    ])
    func unsupported(_ format: String) throws {
        let e = try #require(parseError(format))
        #expect(e.code == .unsupported, "\(e)")
    }

    @Test func errorDescriptionPointsAtTheProblem() throws {
        let e = try #require(parseError("name == "))
        #expect(e.description == """
            expected a value after '=='; add a literal, a %@ argument or a keypath (at offset 8)
                name ==\u{20}
                        ^
            """)
        // Offsets are UTF-8; the caret is placed by characters.
        let u = try #require(parseError("nom == 'Zoé' ~"))
        #expect(u.position == 14)
        #expect(u.description.hasSuffix("    nom == 'Zoé' ~\n                 ^"))
        // Argument values never appear in messages.
        let a = try #require(parseError("x == %d", arguments: ["secret value"]))
        #expect(!a.description.contains("secret"))
    }

    // MARK: - Sort descriptors

    @Test("Sort descriptor parsing", arguments: [
        ("name", FetchSortDescriptor("name")),
        ("name:asc", FetchSortDescriptor("name")),
        ("name:desc", FetchSortDescriptor("name", ascending: false)),
        ("-hours", FetchSortDescriptor("hours", ascending: false)),
        ("owner.name:desc:ci", FetchSortDescriptor("owner.name", ascending: false, caseInsensitive: true)),
        (" colorScheme.primary : ci ", FetchSortDescriptor("colorScheme.primary", caseInsensitive: true)),
    ] as [(String, FetchSortDescriptor)])
    func sortParsing(_ text: String, _ expected: FetchSortDescriptor) throws {
        let parsed = try FetchSortDescriptor(parsing: text)
        #expect(parsed == expected)
        #expect(try FetchSortDescriptor(parsing: parsed.description) == parsed)
    }

    @Test func sortParsingErrors() throws {
        #expect {
            try FetchSortDescriptor(parsing: "name:sideways")
        } throws: { error in
            let e = error as! FetchPredicateError
            return e.code == .syntax && e.position == 5 && e.reason.contains("unknown sort option 'sideways'")
        }
        #expect(throws: FetchPredicateError.self) { try FetchSortDescriptor(parsing: ":desc") }
        #expect(try FetchSortDescriptor.list(parsing: "owner.name, hours:desc") == [FetchSortDescriptor("owner.name"), FetchSortDescriptor("hours", ascending: false)])
    }
}
