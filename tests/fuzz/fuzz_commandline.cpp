// relctl's command line: words (the input split at NUL bytes) are parsed or
// refused with a usage error; nothing else escapes, nothing crashes.

#include "commandline.h"
#include "fuzz.h"
#include "relctl/error.h"

#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::vector<std::string> words;
    std::string word;
    for (char c : fuzz::text(data, size)) {
        if (c == '\0') {
            words.push_back(word);
            word.clear();
        } else {
            word += c;
        }
        if (words.size() > 64)
            return 0;
    }
    if (!word.empty() || words.empty())
        words.push_back(word);
    try {
        relctl::cli::CommandLine line;
        const relctl::cli::Invocation invocation = line.parse(words);
        fuzz::check(invocation.help || !invocation.arguments.command().empty(),
                    "a parsed line names a command");
    } catch (const relctl::Error& e) {
        fuzz::check(e.code() == relctl::ExitCode::Usage, "a bad command line is a usage error");
    }
    return 0;
}
