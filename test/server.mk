# tests of the server component
