# tests of the storage component
