#include "commands.h"

int main(int argc, char** argv)
{
    return relctl::cli::run(argc, argv);
}
