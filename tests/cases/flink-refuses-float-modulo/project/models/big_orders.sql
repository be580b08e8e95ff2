SELECT customer_id, amount, CAST(amount AS DOUBLE) % 2.5 AS rest FROM source('orders') WHERE customer_id IS NOT NULL
