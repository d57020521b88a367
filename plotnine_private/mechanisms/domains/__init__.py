"""Where cells lie: hexagon and grid geometry, private ranges."""
