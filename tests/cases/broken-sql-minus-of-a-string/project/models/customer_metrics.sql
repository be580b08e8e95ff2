SELECT customer_id, -CAST(amount AS STRING) AS total_spend
FROM source('orders')
