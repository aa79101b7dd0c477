# tests of the client component
