# tests of the target component
