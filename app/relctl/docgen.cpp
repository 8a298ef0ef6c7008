// relctl-docgen: writes what is generated from relctl's grammar and catalogue
// (reference.h). The build runs it for the manual page and the completion
// scripts; `relctl-docgen markdown docs/reference/commands.md` regenerates
// the command reference that a test compares with the code.
//
//   relctl-docgen man|bash|zsh|markdown FILE

#include "reference.h"
#include "relctl/error.h"

#include <filesystem>
#include <fstream>
#include <iostream>

int main(int argc, char** argv)
{
    using namespace relctl::cli;
    if (argc != 3) {
        std::cerr << "usage: relctl-docgen man|bash|zsh|markdown FILE\n";
        return 2;
    }
    const std::string what = argv[1];
    try {
        CommandLine grammar;
        const CommandReference root = grammar.reference();
        const std::string text = what == "man"        ? manPage(root)
                                 : what == "markdown" ? markdownReference(root)
                                                      : completionScript(root, what);
        const std::filesystem::path file = argv[2];
        if (file.has_parent_path())
            std::filesystem::create_directories(file.parent_path());
        std::ofstream out(file, std::ios::binary | std::ios::trunc);
        out << text;
        out.close();
        if (!out) {
            std::cerr << "relctl-docgen: cannot write " << file << "\n";
            return 1;
        }
    } catch (const std::exception& e) {
        std::cerr << "relctl-docgen: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
