-- TODO: write the customer metrics model
/* nothing here yet */
