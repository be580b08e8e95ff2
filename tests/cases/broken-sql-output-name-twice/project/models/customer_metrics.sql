SELECT customer_id, amount AS total_spend, amount AS total_spend FROM source('orders')
