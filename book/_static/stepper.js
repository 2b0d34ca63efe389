// stepper placeholder
