// Edit-script parsing (grammar: edit_script.h). A hand-written word splitter and one small
// parser per form; every value is checked here for syntax only, and World::apply does the range and cap checks.
#include "vtp/terrain/edit_script.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <system_error>

#include "edit_apply.h"

namespace vtp::terrain {
namespace {

Error invalid(std::string message) { return Error{ErrorCode::kInvalidArgument, std::move(message), {}}; }

// The grammar's separators (edit_script.h): spaces and tabs. Any other control byte is part of a word, which then
// fails to parse.
bool isSpace(char ch) { return ch == ' ' || ch == '\t'; }

// Script text quoted in a message: at most 40 bytes, control and non-ASCII bytes shown as '?', so every message stays
// one short printable line whatever the input holds.
std::string quote(std::string_view text) {
  constexpr std::size_t kMaxQuoted = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kMaxQuoted; ++i) {
    const auto ch = static_cast<unsigned char>(text[i]);
    out += (ch >= 0x20 && ch < 0x7f) ? char(ch) : '?';
  }
  if (text.size() > kMaxQuoted) out += "...";
  return out + "'";
}

// No edit line has more than 6 words; the words past this many cannot change whether a line parses, or which word
// it is refused for (a 7th word already refuses it), so a line of a million words costs no more than this.
constexpr std::size_t kMaxWords = 8;

// The line up to its comment, split into at most kMaxWords words. One CR at the end of the line (CRLF) is dropped.
std::vector<std::string_view> splitWords(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size() && words.size() < kMaxWords) {
    while (i < line.size() && isSpace(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !isSpace(line[i])) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// --- Values ----------------------------------------------------------------------------------------------------------

Result<double> parseNumber(std::string_view key, std::string_view text) {
  double v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range) return invalid(std::string(key) + ": " + quote(text) + " is out of range");
  if (ec != std::errc{} || p != end) return invalid(std::string(key) + ": " + quote(text) + " is not a number");
  // from_chars accepts "nan" and "inf"; no edit takes them.
  if (!std::isfinite(v)) return invalid(std::string(key) + ": " + quote(text) + " is not a finite number");
  return v;
}

Result<std::int32_t> parseInt(std::string_view key, std::string_view text) {
  std::int32_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc::result_out_of_range) {
    return invalid(std::string(key) + ": " + quote(text) + " is outside the 32-bit integer range");
  }
  if (ec != std::errc{} || p != end) return invalid(std::string(key) + ": " + quote(text) + " is not an integer");
  return v;
}

// "a,b,c" into exactly three parts.
Result<std::array<std::string_view, 3>> splitTriple(std::string_view key, std::string_view text) {
  std::array<std::string_view, 3> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::size_t comma = text.find(',', start);
    const bool last = i == 2;
    if (last != (comma == std::string_view::npos)) {
      return invalid(std::string(key) + ": " + quote(text) + " must be three comma-separated values x,y,z");
    }
    parts[i] = text.substr(start, last ? std::string_view::npos : comma - start);
    start = comma + 1;
  }
  return parts;
}

Result<Vec3d> parseVec(std::string_view key, std::string_view text) {
  auto parts = splitTriple(key, text);
  if (!parts) return parts.error();
  std::array<double, 3> v{};
  for (std::size_t i = 0; i < 3; ++i) {
    Result<double> d = parseNumber(key, (*parts)[i]);
    if (!d) return d.error();
    v[i] = *d;
  }
  return Vec3d{v[0], v[1], v[2]};
}

Result<VoxelCoord> parseCoord(std::string_view key, std::string_view text) {
  auto parts = splitTriple(key, text);
  if (!parts) return parts.error();
  std::array<std::int32_t, 3> v{};
  for (std::size_t i = 0; i < 3; ++i) {
    Result<std::int32_t> n = parseInt(key, (*parts)[i]);
    if (!n) return n.error();
    v[i] = *n;
  }
  return VoxelCoord{v[0], v[1], v[2]};
}

Result<std::uint8_t> parseOccupancy(std::string_view text) {
  unsigned v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc{} || p != end || v > 255) {
    return invalid("occupancy: " + quote(text) + " is not an integer in 0..255");
  }
  return std::uint8_t(v);
}

Result<std::uint8_t> parseMaterial(std::string_view key, std::string_view text, const MaterialTable& materials) {
  Result<std::uint8_t> m = materials.parse(text);
  if (!m) {
    const std::string prefix = key == "material" ? std::string() : std::string(key) + ": ";
    return Error{m.error().code, prefix + "unknown material " + quote(text), {}};
  }
  return m;
}

// --- Keys ------------------------------------------------------------------------------------------------------------

// The key=value words of one line, checked against the keys its form takes.
class Fields {
 public:
  // `form` names the line's form in messages ("sphere fill"); `keys` are the keys it takes, all required.
  static Result<Fields> parse(std::string_view form, std::span<const std::string_view> words,
                              std::vector<std::string_view> keys) {
    Fields f;
    f.m_keys = std::move(keys);
    f.m_values.resize(f.m_keys.size());
    for (std::string_view word : words) {
      const std::size_t eq = word.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        return invalid(std::string(form) + ": unexpected " + quote(word) + " (expected key=value)");
      }
      const std::string_view key = word.substr(0, eq);
      const std::string_view value = word.substr(eq + 1);
      std::size_t k = 0;
      while (k < f.m_keys.size() && f.m_keys[k] != key) ++k;
      if (k == f.m_keys.size()) {
        if (key == "material" && form.ends_with(" clear")) return invalid(std::string(form) + " takes no material");
        return invalid(std::string(form) + ": unknown key " + quote(key) + " (takes " + f.keyList() + ")");
      }
      if (f.m_values[k]) return invalid(std::string(form) + ": duplicate key " + quote(key));
      if (value.empty()) return invalid(std::string(form) + ": " + quote(key) + " has no value");
      f.m_values[k] = value;
    }
    for (std::size_t k = 0; k < f.m_keys.size(); ++k) {
      if (!f.m_values[k]) return invalid(std::string(form) + ": missing key '" + std::string(f.m_keys[k]) + "'");
    }
    return f;
  }

  // The value of a key the form takes (parse() guarantees it is present).
  std::string_view operator[](std::string_view key) const {
    for (std::size_t k = 0; k < m_keys.size(); ++k) {
      if (m_keys[k] == key) return *m_values[k];
    }
    return {};
  }

 private:
  std::string keyList() const {
    std::string out;
    for (std::string_view k : m_keys) out += (out.empty() ? "" : ", ") + std::string(k);
    return out;
  }
  std::vector<std::string_view> m_keys;
  std::vector<std::optional<std::string_view>> m_values;
};

// --- Forms -----------------------------------------------------------------------------------------------------------

Result<EditCommand> parseShapeEdit(std::string_view shape, std::span<const std::string_view> words,
                                   const MaterialTable& materials) {
  if (words.empty()) return invalid(std::string(shape) + ": missing op (fill, clear or paint)");
  const std::string_view op_word = words[0];
  EditOp op;
  if (op_word == "fill") {
    op = EditOp::kFill;
  } else if (op_word == "clear") {
    op = EditOp::kClear;
  } else if (op_word == "paint") {
    op = EditOp::kPaint;
  } else {
    return invalid(std::string(shape) + ": unknown op " + quote(op_word) + " (expected fill, clear or paint)");
  }
  std::vector<std::string_view> keys;
  if (shape == "sphere") {
    keys = {"center", "radius"};
  } else if (shape == "box") {
    keys = {"min", "max"};
  } else {
    keys = {"center", "radius", "height"};
  }
  // Clear removes whatever is there; only fill and paint name a material.
  const bool has_material = op != EditOp::kClear;
  if (has_material) keys.push_back("material");
  Result<Fields> f = Fields::parse(std::string(shape) + " " + std::string(op_word), words.subspan(1), std::move(keys));
  if (!f) return f.error();

  ShapeEdit edit;
  edit.op = op;
  edit.material = kAirMaterial;
  if (shape == "box") {
    Result<Vec3d> lo = parseVec("min", (*f)["min"]);
    if (!lo) return lo.error();
    Result<Vec3d> hi = parseVec("max", (*f)["max"]);
    if (!hi) return hi.error();
    edit.shape = BoxShape{*lo, *hi};
  } else {
    Result<Vec3d> center = parseVec("center", (*f)["center"]);
    if (!center) return center.error();
    Result<double> radius = parseNumber("radius", (*f)["radius"]);
    if (!radius) return radius.error();
    if (shape == "sphere") {
      edit.shape = SphereShape{*center, *radius};
    } else {
      Result<double> height = parseNumber("height", (*f)["height"]);
      if (!height) return height.error();
      edit.shape = CylinderShape{*center, *radius, *height};
    }
  }
  if (has_material) {
    Result<std::uint8_t> m = parseMaterial("material", (*f)["material"], materials);
    if (!m) return m.error();
    edit.material = *m;
  }
  return EditCommand{std::move(edit)};
}

Result<EditCommand> parseReplace(std::span<const std::string_view> words, const MaterialTable& materials) {
  Result<Fields> f = Fields::parse("replace", words, {"from", "to", "min", "max"});
  if (!f) return f.error();
  Result<std::uint8_t> from = parseMaterial("from", (*f)["from"], materials);
  if (!from) return from.error();
  Result<std::uint8_t> to = parseMaterial("to", (*f)["to"], materials);
  if (!to) return to.error();
  Result<VoxelCoord> lo = parseCoord("min", (*f)["min"]);
  if (!lo) return lo.error();
  Result<VoxelCoord> hi = parseCoord("max", (*f)["max"]);
  if (!hi) return hi.error();
  return EditCommand{ReplaceEdit{VoxelBox{*lo, *hi}, *from, *to}};
}

Result<EditCommand> parseVoxel(std::span<const std::string_view> words, const MaterialTable& materials) {
  if (words.empty() || words[0] != "set") {
    return invalid(words.empty() ? std::string("voxel: missing op (set)")
                                 : "voxel: unknown op " + quote(words[0]) + " (expected set)");
  }
  Result<Fields> f = Fields::parse("voxel set", words.subspan(1), {"at", "material", "occupancy"});
  if (!f) return f.error();
  Result<VoxelCoord> at = parseCoord("at", (*f)["at"]);
  if (!at) return at.error();
  Result<std::uint8_t> m = parseMaterial("material", (*f)["material"], materials);
  if (!m) return m.error();
  Result<std::uint8_t> occupancy = parseOccupancy((*f)["occupancy"]);
  if (!occupancy) return occupancy.error();
  return EditCommand{SetVoxelEdit{*at, canonicalVoxel(*m, *occupancy)}};
}

// One edit from the words of a non-empty line.
Result<EditCommand> parseWords(std::span<const std::string_view> words, const MaterialTable& materials) {
  const std::string_view head = words[0];
  const std::span<const std::string_view> rest = words.subspan(1);
  if (head == "sphere" || head == "box" || head == "cylinder") return parseShapeEdit(head, rest, materials);
  if (head == "replace") return parseReplace(rest, materials);
  if (head == "voxel") return parseVoxel(rest, materials);
  return invalid("unknown shape " + quote(head) + " (expected sphere, box, cylinder, replace or voxel)");
}

Error atLine(std::uint32_t line, const Error& e) {
  return Error{e.code, std::to_string(line) + ": " + e.message, e.byte_offset};
}

}  // namespace

Result<std::optional<EditCommand>> parseEditLine(std::string_view line, const MaterialTable& materials) {
  const std::vector<std::string_view> words = splitWords(line);
  if (words.empty()) return std::optional<EditCommand>{};
  Result<EditCommand> edit = parseWords(words, materials);
  if (!edit) return edit.error();
  return std::optional<EditCommand>{std::move(edit).value()};
}

Result<EditScript> parseEditScript(std::string_view text, const MaterialTable& materials) {
  EditScript script;
  std::uint32_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t newline = text.find('\n', start);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline;
    if (line_number == std::numeric_limits<std::uint32_t>::max()) {
      return invalid(std::to_string(line_number) + ": script has more lines than the parser counts");
    }
    ++line_number;
    Result<std::optional<EditCommand>> edit = parseEditLine(text.substr(start, end - start), materials);
    if (!edit) return atLine(line_number, edit.error());
    if (edit->has_value()) {
      script.edits.push_back(std::move(**edit));
      script.lines.push_back(line_number);
    }
    start = end + 1;
  }
  return script;
}

Result<EditResult> applyEditScript(World& world, const EditScript& script) {
  Result<EditResult> result = world.apply(std::span<const EditCommand>(script.edits));
  if (result) return result;
  // World::apply rejected the batch and changed nothing; find the edit to blame with the same checks it made, in
  // the same order (each edit, then the running batch total).
  BatchTotals totals(world.limits(), script.edits.size());
  for (std::size_t i = 0; i < script.edits.size() && i < script.lines.size(); ++i) {
    Result<VoxelBox> box = validateEdit(script.edits[i], world.config());
    if (!box) return atLine(script.lines[i], box.error());
    if (Status s = totals.add(*box); !s) return atLine(script.lines[i], s.error());
  }
  return result;
}

}  // namespace vtp::terrain
