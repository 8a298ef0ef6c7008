# Run at install time (install(CODE) in app/CMakeLists.txt, component
# relctl_Console): the console's icon in the hicolor theme at the sizes menus,
# docks and window lists look for, 16 to 256 pixels, rendered from the SVG
# that is also installed as the scalable one. Rendered when installed rather
# than at every build: only an install needs an SVG renderer. rsvg-convert
# (Debian package librsvg2-bin) gives the same bytes for the same SVG each time.
# Expects RELCTL_ICON_SVG (the source), RELCTL_ICON_NAME (the installed name,
# the AppStream id) and RELCTL_ICON_WORK (a directory in the build tree).
find_program(RELCTL_RSVG_CONVERT rsvg-convert)
if(NOT RELCTL_RSVG_CONVERT)
    message(FATAL_ERROR "Installing the release console's icons needs rsvg-convert: "
                        "apt-get install librsvg2-bin")
endif()
foreach(size 16 22 24 32 48 64 128 256)
    set(png "${RELCTL_ICON_WORK}/${size}x${size}/${RELCTL_ICON_NAME}.png")
    file(MAKE_DIRECTORY "${RELCTL_ICON_WORK}/${size}x${size}")
    execute_process(COMMAND "${RELCTL_RSVG_CONVERT}" -w ${size} -h ${size} -o "${png}" "${RELCTL_ICON_SVG}"
        COMMAND_ERROR_IS_FATAL ANY)
    file(INSTALL "${png}" DESTINATION "${CMAKE_INSTALL_PREFIX}/share/icons/hicolor/${size}x${size}/apps")
endforeach()
