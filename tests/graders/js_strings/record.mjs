// Records what node's own RegExp, String.prototype.trim and JSON.parse give for the cases below, the
// string rules AgentV's JavaScript graders follow (regex, equals / starts-with / ends-with, is-json).
// Usage: node tests/graders/js_strings/record.mjs > tests/graders/js_strings/table.json
// Do not edit table.json by hand; test_js_strings.py re-runs this script when node is installed.

const regexCases = [
  // UTF-16 code units without `u`, code points with it
  ["^.$", "", "😀"], ["^.$", "u", "😀"], ["^..$", "", "😀"], ["^..$", "u", "😀"],
  ["^.{1,5}$", "", "😀😀😀"], ["^.{1,5}$", "u", "😀😀😀"],
  ["^[😀]$", "", "😀"], ["^[😀]$", "u", "😀"], ["^[^a]$", "", "😀"], ["^[^a]$", "u", "😀"],
  ["^😀{2}$", "", "😀😀"], ["^😀{2}$", "u", "😀😀"], ["^😀+$", "", "😀\uDE00"],
  ["\\uD83D", "", "😀"], ["\\uD83D", "u", "😀"], ["^\\uD83D\\uDE00$", "u", "😀"],
  ["^\\u{1F600}$", "u", "😀"], ["^\\u{1F600}$", "", "u{1F600}"], ["^\\u{3}$", "", "uuu"],
  ["^\\W\\W$", "", "😀"], ["^\\S$", "", "😀"], ["^\\S$", "u", "😀"], ["x.y", "", "x😀y"],
  ["[\\uD800-\\uDBFF]", "", "a😀"], ["[\\uD800-\\uDBFF]", "u", "a😀"], ["😀", "", "a😀b"],
  ["😀", "i", "A😀B"], ["\\u{1F600}", "ui", "😀"], ["^.$", "s", "😀"], ["^[^]$", "", "😀"],
  // case folding: Kelvin, long s, Turkish i, Greek sigma, sharp s, micro, titlecase
  ["k", "i", "\u212A"], ["k", "ui", "\u212A"], ["K", "i", "\u212A"], ["\u212A", "i", "k"],
  ["\u212A", "ui", "K"], ["s", "i", "\u017F"], ["s", "ui", "\u017F"], ["\u017F", "ui", "S"],
  ["i", "i", "\u0131"], ["i", "ui", "\u0131"], ["I", "i", "\u0131"], ["I", "i", "\u0130"],
  ["i", "ui", "\u0130"], ["\u0130", "i", "i"], ["\u0131", "i", "I"],
  ["σ", "i", "Σ"], ["σ", "i", "ς"], ["ς", "ui", "Σ"], ["Σ", "i", "ς"],
  ["ß", "i", "ẞ"], ["ß", "ui", "ẞ"], ["ss", "i", "ß"], ["ß", "i", "SS"],
  ["µ", "i", "Μ"], ["µ", "ui", "μ"], ["é", "i", "É"], ["ǅ", "i", "ǆ"], ["ǅ", "ui", "Ǆ"],
  ["\\x4b", "i", "k"], ["\\u212a", "i", "k"], ["[\\u212a]", "ui", "k"],
  ["[a-z]", "i", "\u212A"], ["[a-z]", "ui", "\u212A"], ["[a-z]", "ui", "\u017F"],
  ["[^a-z]", "ui", "\u212A"], ["[^a-z]", "i", "\u212A"], ["[^k]", "ui", "\u212A"],
  ["\\w", "ui", "\u017F"], ["\\w", "i", "\u017F"], ["\\W", "ui", "\u017F"], ["[\\W]", "ui", "S"],
  ["\\W", "i", "\u212A"], ["\\bs", "ui", "a\u017F"], ["\\b", "ui", "\u017F"], ["\\b", "i", "\u017F"],
  ["\\B", "ui", "a\u212A"], ["^[A-Z]+$", "i", "straße"], ["ǰ", "ui", "J̌"],
  // \s is WhiteSpace + LineTerminator; \d and \w are ASCII
  ["\\s", "", "\uFEFF"], ["\\s", "", "\u0085"], ["\\s", "", "\u001F"], ["\\s", "", "\u001C"],
  ["\\s", "", "\u180E"], ["\\s", "", "\u200B"], ["\\s", "", "\u00A0"], ["\\s", "", "\u2028"],
  ["\\s", "", "\u3000"], ["\\S", "", "\u0085"], ["[\\S]", "", "\u0085"], ["[^\\s]", "", "\uFEFF"],
  ["^\\s+$", "u", "\uFEFF\u3000"], ["a\\sb", "", "a\uFEFFb"], ["a\\sb", "", "a\u0085b"],
  ["[\\s\\d]", "", "\u001E"], ["\\d", "", "٣"], ["\\d", "u", "٣"], ["\\w", "", "é"], ["\\w", "u", "é"],
  ["[\\W]", "", "é"], ["[\\D]", "", "٣"], ["é\\b", "", "café!"], ["\\bcaf", "", "écafé"],
  // line terminators, anchors, literals
  ["a.b", "", "a\u2028b"], ["a.b", "s", "a\u2028b"], ["^b", "m", "a\u2028b"], ["^b", "m", "a\rb"],
  ["a$", "m", "a\rb"], ["a$", "", "a\n"], ["a$", "m", "a\u2029"], ["\\q", "", "q"],
  ["a{,5}", "", "a{,5}"], ["[^]", "", "\n"], ["(?<y>\\d{4})-\\k<y>", "", "2024-2024"],
  ["(?<=\\$)\\d+", "", "cost $42"], ["(?:ab)+c", "i", "ABABC"], ["[\\b]", "", "\b"],
];

const trimCodes = [];
for (let code = 0; code <= 0xa0; code++) trimCodes.push(code);
trimCodes.push(0x1680, ...Array.from({ length: 11 }, (_, i) => 0x2000 + i), 0x2028, 0x2029, 0x202f,
  0x205f, 0x3000, 0xfeff, 0x180e, 0x200b, 0x200c, 0x200d, 0x2060, 0xfffe);

// Deep documents are described, not stored: [kind, depth] -> text (the Python test builds the same).
function jsonText([kind, depth]) {
  if (kind === "array") return "[".repeat(depth) + "]".repeat(depth);
  if (kind === "object") return '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  if (kind === "unclosed") return "[".repeat(depth) + "]".repeat(depth - 1);
  if (kind === "trailing-comma") return "[".repeat(depth) + "1,"+ "]".repeat(depth);
  if (kind === "mixed") return '[{"a":'.repeat(depth) + "null" + "}]".repeat(depth);
  throw new Error(kind);
}
const jsonDeep = [];
for (const kind of ["array", "object", "unclosed", "trailing-comma", "mixed"]) {
  for (const depth of [100, 1000, 5000, 100000]) jsonDeep.push([kind, depth]);
}
const jsonTexts = ["[]", "[1,]", "01", "NaN", "-0", "1e400", "\u00a0{}", "\ufeff{}", " \t\r\n{} ",
  '"\\ud800"', '{"a":1,"a":2}', '"\u2028"', '"\t"', "[1 2]", "", "true false", '{"a" 1}', '"\\x41"'];

const parses = (text) => { try { JSON.parse(text); return true; } catch { return false; } };

const table = {
  _comment: `Recorded by tests/graders/js_strings/record.mjs with node ${process.version}. Do not edit by hand.`,
  node: process.version,
  regex: regexCases.map(([pattern, flags, text]) => {
    const found = new RegExp(pattern, flags).exec(text);
    return { pattern, flags, text, test: found !== null, index: found === null ? null : found.index };
  }),
  trim: trimCodes.map((code) => {
    const c = String.fromCharCode(code);
    return { code, trimmed: (c + "a" + c).trim() === "a", space: /\s/.test(c) };
  }),
  json_deep: jsonDeep.map((doc) => ({ doc, parses: parses(jsonText(doc)) })),
  json_text: jsonTexts.map((text) => ({ text, parses: parses(text) })),
};
process.stdout.write(JSON.stringify(table, null, 1) + "\n");
