// Code highlighting by a small tokenizer: comments, strings, numbers and keywords of common
// languages, the rest plain. highlight(code, lang) gives the code's pieces in order, each
// {kind, text} (kind "" for plain text), so that joined they are the code exactly. No DOM here:
// the node tests run it as it is.

const C_LIKE = { line: "//", block: ["/*", "*/"], strings: ['"', "'"] };
const WORDS = (text) => new Set(text.split(/\s+/));

const LANGUAGES = {
  python: { line: "#", strings: ['"""', "'''", '"', "'"],
    keywords: WORDS("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda match case nonlocal not or pass raise return try while with yield self") },
  javascript: { ...C_LIKE, strings: ['"', "'", "`"],
    keywords: WORDS("async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while with yield interface type enum implements private public protected readonly as") },
  json: { strings: ['"'], keywords: WORDS("true false null") },
  bash: { line: "#", strings: ['"', "'"],
    keywords: WORDS("if then else elif fi for while until do done case esac in function return local export readonly set unset echo exit source alias cd") },
  go: { ...C_LIKE, strings: ['"', "'", "`"],
    keywords: WORDS("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false") },
  rust: { ...C_LIKE,
    keywords: WORDS("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while") },
  c: { ...C_LIKE,
    keywords: WORDS("auto bool break case catch char class const continue default delete do double else enum explicit extern false float for friend goto if inline int long namespace new nullptr private protected public return short signed sizeof static struct switch template this throw true try typedef typename union unsigned using virtual void volatile while include define") },
  java: { ...C_LIKE,
    keywords: WORDS("abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long new null package private protected public return short static super switch this throw throws true false try var void while record fun val when object override") },
  sql: { line: "--", block: ["/*", "*/"], strings: ["'", '"'], caseless: true,
    keywords: WORDS("select from where and or not insert into values update set delete create table index view drop alter add primary key foreign references join left right inner outer on group by order having limit offset as distinct union all null is in like between case when then else end returning with") },
  yaml: { line: "#", strings: ['"', "'"], keywords: WORDS("true false null yes no on off") },
  toml: { line: "#", strings: ['"""', "'''", '"', "'"], keywords: WORDS("true false") },
};

const ALIASES = {
  py: "python", python3: "python", js: "javascript", jsx: "javascript", ts: "javascript",
  tsx: "javascript", typescript: "javascript", mjs: "javascript", node: "javascript",
  sh: "bash", shell: "bash", zsh: "bash", console: "bash", golang: "go", rs: "rust",
  cpp: "c", "c++": "c", h: "c", hpp: "c", cs: "java", csharp: "java", kotlin: "java", kt: "java",
  postgresql: "sql", sqlite: "sql", yml: "yaml", jsonc: "json",
};

const NUMBER = /^(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/;
const WORD = /^[A-Za-z_$][\w$]*/;

export function language(lang) {
  const name = String(lang || "").toLowerCase();
  return LANGUAGES[name] ? name : ALIASES[name] || null;
}

// The string starting at `i` (its opening quote `quote`): to its closing quote, escapes skipped;
// a one-line quote ends at the line's end when unclosed.
function stringEnd(code, i, quote) {
  const long = quote.length === 3 || quote === "`";
  for (let j = i + quote.length; j < code.length; j += 1) {
    if (code[j] === "\\") { j += 1; continue; }
    if (code.startsWith(quote, j)) return j + quote.length;
    if (code[j] === "\n" && !long) return j;
  }
  return code.length;
}

// What starts at `i`: [kind, end] or null for a plain character.
function tokenAt(code, i, spec) {
  if (spec.block && code.startsWith(spec.block[0], i)) {
    const end = code.indexOf(spec.block[1], i + spec.block[0].length);
    return ["comment", end === -1 ? code.length : end + spec.block[1].length];
  }
  if (spec.line && code.startsWith(spec.line, i) && (spec.line !== "#" || !/[\w$]/.test(code[i - 1] || ""))) {
    const end = code.indexOf("\n", i);
    return ["comment", end === -1 ? code.length : end];
  }
  const quote = spec.strings.find((q) => code.startsWith(q, i));
  if (quote) return ["string", stringEnd(code, i, quote)];
  const before = code[i - 1] || "";
  if (/[\w$.]/.test(before)) return null;
  const number = NUMBER.exec(code.slice(i, i + 64));
  if (number && number[0] !== "." && /\d/.test(number[0])) return ["number", i + number[0].length];
  const word = WORD.exec(code.slice(i, i + 128));
  if (!word) return null;
  const known = spec.keywords.has(spec.caseless ? word[0].toLowerCase() : word[0]);
  return [known ? "keyword" : "", i + word[0].length];
}

export function highlight(code, lang) {
  const name = language(lang);
  if (!name) return [{ kind: "", text: code }];
  const spec = LANGUAGES[name];
  const out = [];
  let plain = "";
  let i = 0;
  while (i < code.length) {
    const found = tokenAt(code, i, spec);
    if (!found || !found[0]) {
      const end = found ? found[1] : i + 1;
      plain += code.slice(i, end);
      i = end;
      continue;
    }
    if (plain) out.push({ kind: "", text: plain });
    plain = "";
    out.push({ kind: found[0], text: code.slice(i, found[1]) });
    i = found[1];
  }
  if (plain) out.push({ kind: "", text: plain });
  return out;
}
