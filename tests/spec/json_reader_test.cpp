// The checked JSON reader: size and depth limits, number overflow naming the key, files that cannot be read.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "cost_model/spec/config.hpp"
#include "cost_model/spec/json_reader.hpp"
#include "tests/spec/expect_spec_error.hpp"
#include "tests/spec/scratch_dir.hpp"

namespace zeropp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

class JsonFiles : public ScratchDir {};

TEST(JsonReader, NestingUpToTheLimitParses) {
  const json j = parse_json_with_comments(nested(kConfigJson.max_depth), "ok.json");
  EXPECT_TRUE(j.is_array());
  EXPECT_NO_THROW(parse_json_with_comments("{\"a\": {\"b\": " + nested(kConfigJson.max_depth - 2) + "}}", "ok.json"));
}

TEST(JsonReader, NestingPastTheLimitIsRefused) {
  const std::string message =
      "deep.json: invalid JSON: objects and arrays nested deeper than 64 levels (the limit for config JSON)";
  EXPECT_SPEC_ERROR(parse_json_with_comments(nested(kConfigJson.max_depth + 1), "deep.json"), "", message);
  // The input of the issue: 100,000 levels used to overflow the stack.
  EXPECT_SPEC_ERROR(parse_json_with_comments(nested(100000), "deep.json"), "", message);
  EXPECT_SPEC_ERROR(parse_json_with_comments(std::string(100000, '['), "deep.json"), "", message);
  std::string objects = "{\"model\": ";
  for (int i = 0; i < 100000; ++i) objects += "{\"a\": ";
  EXPECT_SPEC_ERROR(parse_json_with_comments(objects, "deep.json"), "", message);
}

TEST(JsonReader, BracketsInStringsAndCommentsAreNotNesting) {
  const std::string brackets(1000, '[');
  const json j =
      parse_json_with_comments("// " + brackets + "\n/* " + brackets + " */ {\"a\": \"" + brackets + "\"}", "ok.json");
  EXPECT_EQ(j.at("a").get<std::string>().size(), 1000u);
}

TEST(JsonReader, NumberOverflowNamesFileLineColumnAndKey) {
  EXPECT_SPEC_ERROR(parse_json_with_comments("{\n  \"parallel\": {\"pp\": 2,\n    \"tp\": 1e400}}", "plan.json"), "",
                    "plan.json:3:11: invalid JSON: number overflow parsing '1e400' (at \"parallel.tp\")");
  EXPECT_SPEC_ERROR(parse_json_with_comments("{\"strategies\": [1, -2e999]}", "e.json"), "",
                    "e.json:1:20: invalid JSON: number overflow parsing '-2e999' (at \"strategies[1]\")");
  EXPECT_SPEC_ERROR(parse_json_with_comments("[{\"a\": [0]}, {\"b\": [[1e400]]}]", "a.json"), "",
                    "a.json:1:22: invalid JSON: number overflow parsing '1e400' (at \"[1].b[0][0]\")");
  EXPECT_SPEC_ERROR(parse_json_with_comments("1e400", "n.json"), "",
                    "n.json:1:1: invalid JSON: number overflow parsing '1e400'");
}

TEST(JsonReader, ControlCharactersAndBadBytesAreParseErrors) {
  EXPECT_SPEC_ERROR(parse_json_with_comments(std::string("{\"a\": \"x\x01y\"}"), "c.json"), "",
                    "c.json:1:9: invalid JSON: syntax error while parsing value - invalid string: control character "
                    "U+0001 (SOH) must be escaped to \\u0001; last read: '\"x<U+0001>'");
  EXPECT_SPEC_ERROR(parse_json_with_comments(std::string("{\"a\": \"\xff\"}"), "u.json"), "",
                    "u.json:1:8: invalid JSON: syntax error while parsing value - invalid string: ill-formed UTF-8 "
                    "byte; last read: '\"\\xff'");
  // nlohmann alone would stop at the NUL and accept the text before it.
  EXPECT_SPEC_ERROR(parse_json_with_comments(std::string("{\"a\": 1}\0{\"b\"", 14), "z.json"), "",
                    "z.json:1:9: invalid JSON: NUL byte");
}

// A NUL written as \u0000 in a key or a string: refused, and the message shows it (as \x00) and what follows
// it, where a message quoting the key once ended at the NUL.
TEST(JsonReader, NulInAKeyOrAStringIsRefusedWithTheWholeText) {
  EXPECT_SPEC_ERROR(parse_json_with_comments(R"({"model": {"na\u0000me": 1}})", "m.json"), "",
                    "m.json: invalid JSON: a key in \"model\" holds a NUL character (\\u0000): \"na\\x00me\"");
  EXPECT_SPEC_ERROR(parse_json_with_comments(R"({"model": {"name": "gpt\u0000-after"}})", "m.json"), "",
                    "m.json: invalid JSON: the string at \"model.name\" holds a NUL character (\\u0000): "
                    "\"gpt\\x00-after\"");
  EXPECT_SPEC_ERROR(parse_json_with_comments(R"({"\u0000": 1})", "m.json"), "",
                    "m.json: invalid JSON: a key holds a NUL character (\\u0000): \"\\x00\"");
}

TEST(JsonReader, TextOverTheSizeLimitIsRefused) {
  const JsonLimits tiny{"test", 8, 64};
  EXPECT_NO_THROW(parse_json_with_comments("[1, 2]  ", "ok.json", tiny));
  EXPECT_SPEC_ERROR(parse_json_with_comments("[1, 2, 3]", "big.json", tiny), "",
                    "big.json: 9 bytes, over the limit of 8 bytes for test JSON");
}

TEST_F(JsonFiles, FileOverTheSizeLimitIsRefusedBeforeReading) {
  // A sparse 3 GB file: the size check answers without reading it (reading it took 21 s and 6 GB before).
  const fs::path big = dir_ / "big.json";
  { std::ofstream(big) << "{}"; }
  fs::resize_file(big, std::uintmax_t{3} << 30);
  EXPECT_SPEC_ERROR(read_json_file(big), "",
                    big.string() + ": 3221225472 bytes, over the limit of 64 MiB for config JSON");
  EXPECT_SPEC_ERROR(load_model(big.string()), "",
                    big.string() + ": 3221225472 bytes, over the limit of 64 MiB for config JSON");
  // Benchmark results have their own, larger limit.
  EXPECT_SPEC_ERROR(read_json_file(big, kBenchmarkJson), "",
                    big.string() +
                        ": 3221225472 bytes, over the limit of 256 MiB for benchmark "
                        "results JSON");
}

TEST_F(JsonFiles, FileThatReportsNoSizeIsCutAtTheLimit) {
  // /proc files report a size of 0; the read itself must stop at the limit.
  const JsonLimits tiny{"test", 16, 64};
  EXPECT_SPEC_ERROR(read_json_file("/proc/self/maps", tiny), "",
                    "/proc/self/maps: over the limit of 16 bytes for test JSON");
}

TEST_F(JsonFiles, UnreadableFilesNameThemselves) {
  EXPECT_SPEC_ERROR(read_json_file(dir_ / "missing.json"), "",
                    (dir_ / "missing.json").string() + ": cannot read the file");
  EXPECT_SPEC_ERROR(read_json_file(dir_), "", dir_.string() + ": is a directory, not a JSON file");
}

TEST_F(JsonFiles, LoadersReportTheFileAndTheKeyOfAnOverflow) {
  const fs::path model = write("m.json", "{\"layers\": 2, \"hidden\": 1e400}");
  EXPECT_SPEC_ERROR(load_model(model.string()), "",
                    model.string() + ":1:25: invalid JSON: number overflow parsing '1e400' (at \"hidden\")");
  const fs::path deep = write("deep.json", std::string(100000, '['));
  EXPECT_SPEC_ERROR(load_plan(deep.string()), "",
                    deep.string() +
                        ": invalid JSON: objects and arrays nested deeper than 64 levels (the limit for "
                        "config JSON)");
  EXPECT_SPEC_ERROR(load_experiment(deep.string()), "",
                    deep.string() +
                        ": invalid JSON: objects and arrays nested deeper than 64 levels (the limit for "
                        "config JSON)");
}

}  // namespace
}  // namespace zeropp
