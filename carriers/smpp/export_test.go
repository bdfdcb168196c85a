package smpp

// IDForms exposes idForms to the specs.
var IDForms = idForms
