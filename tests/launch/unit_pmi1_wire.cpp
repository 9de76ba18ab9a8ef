// PMI-1 line parsing and formatting, against the behaviour of MPICH's PMIU_parse_keyvals.
#include <catch2/catch.hpp>

#include "launch/pmi1_wire.hpp"
#include "trainrt/error.hpp"

using namespace trainrt::launch::pmi1;

TEST_CASE("pmi1 parse_line splits key=value tokens in order", "[pmi1]") {
    Message message = parse_line("cmd=put kvsname=kvs_1 key=-bcast-1-0 value=00FF");
    REQUIRE(message.fields.size() == 4);
    CHECK(message.command() == "put");
    CHECK(message.fields[1] == Field{"kvsname", "kvs_1"});
    CHECK(message.require("key") == "-bcast-1-0");
    CHECK(message.require("value") == "00FF");
    CHECK_FALSE(message.find("rc"));
}

TEST_CASE("pmi1 parse_line keeps '=' inside a value and accepts empty values", "[pmi1]") {
    Message message = parse_line("cmd=put kvsname=k key=a value=segments=3");
    CHECK(message.require("value") == "segments=3");
    CHECK(parse_line("cmd=get_result rc=0 value=").require("value").empty());
}

TEST_CASE("pmi1 parse_line skips repeated and surrounding blanks", "[pmi1]") {
    Message message = parse_line("  cmd=barrier_in   x=1 ");
    REQUIRE(message.fields.size() == 2);
    CHECK(message.command() == "barrier_in");
    CHECK(parse_line("").fields.empty());
    CHECK(parse_line("   ").fields.empty());
}

TEST_CASE("pmi1 parse_line reads mcmd as the command", "[pmi1]") {
    CHECK(parse_line("mcmd=spawn").command() == "spawn");
    CHECK(parse_line("nprocs=2").command().empty());
}

TEST_CASE("pmi1 parse_line rejects tokens MPICH would reject", "[pmi1]") {
    CHECK_THROWS_AS(parse_line("cmd=get garbage"), trainrt::LaunchError);
    CHECK_THROWS_AS(parse_line("=value"), trainrt::LaunchError);
    CHECK_THROWS_AS(parse_line("endcmd"), trainrt::LaunchError);
    CHECK_THROWS_WITH(parse_line("cmd=get =x"), Catch::Contains("column 9"));
}

TEST_CASE("pmi1 require names the missing key and the command", "[pmi1]") {
    CHECK_THROWS_WITH(parse_line("cmd=get kvsname=k").require("key"),
                      Catch::Contains("'get'") && Catch::Contains("key="));
}

TEST_CASE("pmi1 format_line writes one terminated line", "[pmi1]") {
    CHECK(format_line({{"cmd", "barrier_out"}}) == "cmd=barrier_out\n");
    CHECK(format_line({{"cmd", "get_result"}, {"rc", "0"}, {"value", "a=b"}}) ==
          "cmd=get_result rc=0 value=a=b\n");
    CHECK(format_line({{"cmd", "x"}, {"value", ""}}) == "cmd=x value=\n");
}

TEST_CASE("pmi1 format_line refuses what the client could not split back", "[pmi1]") {
    CHECK_THROWS_AS(format_line({{"cmd", "get_result"}, {"value", "a b"}}), trainrt::LaunchError);
    CHECK_THROWS_AS(format_line({{"cmd", "x"}, {"value", "a\nb"}}), trainrt::LaunchError);
    CHECK_THROWS_AS(format_line({{"", "x"}}), trainrt::LaunchError);
    CHECK_THROWS_AS(format_line({{"a=b", "x"}}), trainrt::LaunchError);
}

TEST_CASE("pmi1 format and parse round-trip", "[pmi1]") {
    std::vector<Field> fields{{"cmd", "maxes"}, {"kvsname_max", "256"}, {"vallen_max", "1024"}};
    std::string line = format_line(fields);
    line.pop_back();
    CHECK(parse_line(line).fields == fields);
}

TEST_CASE("pmi1 wire_safe replaces blanks", "[pmi1]") {
    CHECK(wire_safe("key x not\tfound\n") == "key_x_not_found_");
    CHECK(wire_safe("a=b") == "a=b");
}
