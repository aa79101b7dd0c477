# tests of the romio component
